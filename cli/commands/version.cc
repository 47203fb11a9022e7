// `kq version`.

#include <ostream>

#include "cli/command.h"
#include "cli/commands/commands.h"

namespace kq::cli {

int RunVersion(std::ostream& out) {
  // KQ_VERSION comes from the project version in the top-level CMakeLists.
  out << "kq version v" << KQ_VERSION << "\n";
  return kExitOk;
}

}  // namespace kq::cli
