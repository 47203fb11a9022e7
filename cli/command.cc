#include "cli/command.h"

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace kq::cli {

int ReportError(const absl::Status& status, std::ostream& err) {
  err << "kq: " << absl::StatusCodeToString(status.code()) << ": "
      << status.message() << "\n";
  return kExitError;
}

int ReportUnreachable(const std::string& server, ServerOrigin origin,
                      const absl::Status& status, std::ostream& err,
                      const std::string& context) {
  // gRPC words it "... Failed to connect to remote host: Connection
  // refused" (strerror(ECONNREFUSED)).
  if (absl::StrContains(absl::AsciiStrToLower(status.message()),
                        "connection refused")) {
    err << "The connection to the server " << server
        << " was refused - did you specify the right host or port?\n";
  } else {
    // As kubectl's "Unable to connect to the server: dial tcp ...": gRPC's
    // reason names the address itself.
    err << "Unable to connect to the server: " << status.message() << "\n";
  }
  err << "(kq reads --server, KQ_SERVER or the kq context's server; ";
  switch (origin) {
    case ServerOrigin::kFlag:
      err << "this address came from --server";
      break;
    case ServerOrigin::kEnvironment:
      err << "this address came from KQ_SERVER";
      break;
    case ServerOrigin::kContext:
      err << "this address came from context \"" << context
          << "\" (kq config get-contexts)";
      break;
    case ServerOrigin::kDefault:
      err << "none is set, so kq tried its default, " << server;
      break;
  }
  err << ")\n";
  return kExitError;
}

int ReportUsage(const absl::Status& status, std::ostream& err) {
  err << "error: " << status.message() << "\n";
  return kExitUsage;
}

}  // namespace kq::cli
