#pragma once

// What every `kq` command runs with, and how commands end.

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

#include "kq/client/client.h"

namespace kq::cli {

// Process exit codes of `kq`.
inline constexpr int kExitOk = 0;
// A server error, an unreadable or invalid input file.
inline constexpr int kExitError = 1;
// A malformed command line.
inline constexpr int kExitUsage = 2;

// The world a command sees. Commands never touch std::cout, std::cerr or
// the clock directly, so tests drive them with a client of an in-process
// kqd, string streams and a time of their choosing. Borrowed references;
// the caller keeps them alive.
struct CommandContext {
  // kqd (in tests, through a decorator that records what was sent).
  client::Client& client;
  // Results (stdout).
  std::ostream& out;
  // Errors and warnings (stderr).
  std::ostream& err;
  // The time AGE columns are computed against.
  absl::Time now;
};

// Prints `kq: <CODE>: <message>` (e.g. "kq: NOT_FOUND: workload \"a\" not
// found") to `err` and returns kExitError.
int ReportError(const absl::Status& status, std::ostream& err);

// Where the address of kqd that a command uses came from.
enum class ServerOrigin {
  // --server (or `kq simulate --server=host:port`).
  kFlag,
  // $KQ_SERVER.
  kEnvironment,
  // The server of a context of the kq config file (--context's, or the
  // current context).
  kContext,
  // Neither: kq's built-in default.
  kDefault,
};

// Prints kubectl's message for a kqd that cannot be reached at `server`
// (`status`, from Client::Connect, tells a refused connection from others)
// and the ways kq picks its server, naming the one `origin` says was used
// (for kContext, the context `context`), e.g.
//   The connection to the server 127.0.0.1:7070 was refused - did you
//   specify the right host or port?
//   (kq reads --server, KQ_SERVER or the kq context's server; ...)
// Returns kExitError.
int ReportUnreachable(const std::string& server, ServerOrigin origin,
                      const absl::Status& status, std::ostream& err,
                      const std::string& context = "");

// Prints `error: <message>` to `err` and returns kExitUsage.
int ReportUsage(const absl::Status& status, std::ostream& err);

}  // namespace kq::cli
