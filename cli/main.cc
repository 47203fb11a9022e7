// kq: the command-line client of kqd. Builds the real Environment (stdio,
// the wall clock, a gRPC client, $KQ_SERVER, $KQ_TOKEN and the kq config
// file's path) and hands over to RunCli.

#include <stdlib.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "cli/app.h"
#include "cli/kqconfig.h"

#include "base/binary.h"
#include "kq/client/client.h"

int main(int argc, char** argv) {
  kq::InitBinary();
  // gRPC logs failed TLS handshakes and the like to stderr; kq reports each
  // call's status itself. GRPC_VERBOSITY, when set, still decides.
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  std::unique_ptr<kq::client::Client> client;
  kq::cli::Environment env;
  env.connect =
      [&client](
          const kq::client::ClientOptions& options) -> kq::client::Client& {
    client = kq::client::NewGrpcClient(options);
    return *client;
  };
  if (const char* server = std::getenv("KQ_SERVER"); server != nullptr) {
    env.env_server = server;
  }
  if (const char* token = std::getenv("KQ_TOKEN"); token != nullptr) {
    env.env_token = token;
  }
  env.config_path =
      kq::cli::KqConfigPath(std::getenv("KQCONFIG"), std::getenv("HOME"));
  env.in = &std::cin;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.now = absl::Now();
  env.clock = [] { return absl::Now(); };
  if (const char* user = std::getenv("USER"); user != nullptr) {
    env.user = user;
  }
  const int code =
      kq::cli::RunCli(std::vector<std::string>(argv, argv + argc), env);
  // Every answer is in and written, and RunCli has joined its threads and
  // reaped its children; what is left is tearing down gRPC's threads and
  // channel, ~1 ms of a command that takes ~4 (issue 6's
  // one-command-per-job comparison with sbatch). The OS closes the socket.
  // atexit hooks do not run: a coverage or sanitizer build of kq that needs
  // them would return from main instead.
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(code);
}
