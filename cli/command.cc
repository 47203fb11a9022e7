#include "cli/command.h"

#include <ostream>

#include "absl/status/status.h"

namespace kq::cli {

int ReportError(const absl::Status& status, std::ostream& err) {
  err << "kq: " << absl::StatusCodeToString(status.code()) << ": "
      << status.message() << "\n";
  return kExitError;
}

int ReportUsage(const absl::Status& status, std::ostream& err) {
  err << "error: " << status.message() << "\n";
  return kExitUsage;
}

}  // namespace kq::cli
