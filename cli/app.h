#pragma once

// The `kq` command line: flags -> one command. main.cc only builds the real
// Environment; tests build their own around a client of an in-process kqd.

#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/command.h"

#include "kq/client/client.h"

namespace kq::cli {

// The process around a `kq` run. Borrowed pointers; the caller keeps them
// alive for the duration of RunCli.
struct Environment {
  // Returns the client for the connection the command line, the
  // environment and the kq config file chose (ResolveConnection in
  // cli/kqconfig.h): options.target and the credentials. Called at most
  // once, and only by commands that talk to kqd.
  std::function<client::Client&(const client::ClientOptions& options)> connect;
  // The server when neither --server, $KQ_SERVER nor a context names one.
  std::string default_server = "127.0.0.1:7070";
  // $KQ_SERVER and $KQ_TOKEN; empty: unset (main.cc reads them).
  std::string env_server;
  std::string env_token;
  // The kq config file (contexts): $KQCONFIG, else ~/.kq/config (main.cc
  // decides); empty: none, so no contexts.
  std::string config_path;
  // How long a command waits for a connection to kqd before it gives up
  // with that message (a closed port fails at once). Only the connection:
  // the calls keep their own deadlines (`kq run`, `watch` and `apply` take
  // as long as they need).
  absl::Duration connect_timeout = absl::Seconds(1);
  // Standard streams: input for `apply -f -`, output, errors.
  std::istream* in = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  // The time AGE columns are computed against.
  absl::Time now;
  // The current time, for commands that run on (`kq watch` ages); unset:
  // `now`.
  std::function<absl::Time()> clock;
  // Who runs kq ($USER), the actor of `kq preempt`; empty: "operator".
  std::string user;
};

// Parses `args` (args[0] is the program name) and runs the command they
// name. Returns the exit code: 0 success; 1 server or input error, kqd
// unreachable included (within env.connect_timeout, with a hint about the
// address); 2 usage error (missing argument, bad value), with CLI11's
// message on env.err, or for an unknown command or flag kubectl's, naming
// it with the nearest registered ones. `--help` prints usage to env.out and
// returns 0. Never throws.
int RunCli(const std::vector<std::string>& args, const Environment& env);

}  // namespace kq::cli
