#include "cli/kqconfig.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "cli/command.h"

#include "kq/client/client.h"
#include "kq/client/context_file.h"

namespace kq::cli {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path, int error) {
  return absl::InvalidArgumentError(
      absl::StrCat("cannot ", what, " ", path, ": ", strerror(error)));
}

}  // namespace

absl::StatusOr<KqConfig> ParseKqConfig(absl::string_view text,
                                       absl::string_view path) {
  return client::ParseContextFile(text, path);
}

std::string FormatKqConfig(const KqConfig& config) {
  return client::FormatContextFile(config);
}

absl::StatusOr<KqConfig> LoadKqConfig(const std::string& path) {
  absl::StatusOr<KqConfig> config = client::ReadContextFile(path);
  // The CLI's file is made on first use: until then there are no contexts.
  if (absl::IsNotFound(config.status())) return KqConfig();
  if (!config.ok()) return config.status();
  return config;
}

absl::Status SaveKqConfig(const std::string& path, const KqConfig& config) {
  const std::filesystem::path file(path);
  const std::filesystem::path dir =
      file.has_parent_path() ? file.parent_path() : ".";
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    // Only the directories that are missing, each private to the user.
    std::filesystem::create_directories(dir, error);
    if (error) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot make the directory ", dir.string(), ": ", error.message()));
    }
    chmod(dir.c_str(), 0700);
  }
  // In the same directory, so that rename(2) replaces the file in one step.
  std::string temp = (dir / ("." + file.filename().string() + ".XXXXXX"));
  const int fd = mkstemp(temp.data());  // mode 0600
  if (fd < 0) return Errno("write the kq config file", path, errno);
  const std::string text = FormatKqConfig(config);
  auto fail = [&](int err) {
    close(fd);
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  };
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(errno);
    written += static_cast<size_t>(n);
  }
  if (fchmod(fd, 0600) != 0 || fsync(fd) != 0) return fail(errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return Errno("write the kq config file", path, err);
  }
  return absl::OkStatus();
}

std::string KqConfigPath(const char* kqconfig, const char* home) {
  if (kqconfig != nullptr && *kqconfig != '\0') return kqconfig;
  if (home != nullptr && *home != '\0') {
    return (std::filesystem::path(home) / ".kq" / "config").string();
  }
  return "";
}

absl::StatusOr<Connection> ResolveConnection(
    const ConnectionFlags& flags, const ConnectionEnvironment& environment,
    const KqConfig& config, const std::string& config_path) {
  const std::string file =
      config_path.empty() ? std::string("the kq config file") : config_path;
  auto known = [&config, &file] {
    return config.contexts.empty()
               ? absl::StrCat("there are no contexts in ", file,
                              " (make one with kq config set-context)")
               : absl::StrCat("the contexts in ", file, " are ",
                              config.Names());
  };
  // 1. The context: --context's, else the current one.
  const KqContext* context = nullptr;
  if (flags.context.has_value() && !flags.context->empty()) {
    context = config.Find(*flags.context);
    if (context == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "context \"", *flags.context, "\" not found: ", known()));
    }
  } else if (!flags.context.has_value() && !config.current_context.empty()) {
    context = config.Find(config.current_context);
    if (context == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("the current context \"", config.current_context,
                       "\" of ", file, " does not exist: ", known(),
                       " (pick one with kq config "
                       "use-context, or pass --context)"));
    }
  }
  const KqContext none;
  const KqContext& from = context != nullptr ? *context : none;
  Connection connection;
  connection.context = from.name;
  client::ClientOptions& options = connection.options;

  // 2. The server.
  if (flags.server.has_value() && !flags.server->empty()) {
    options.target = *flags.server;
    connection.origin = ServerOrigin::kFlag;
  } else if (flags.context.has_value() && !from.server.empty()) {
    options.target = from.server;
    connection.origin = ServerOrigin::kContext;
  } else if (!environment.server.empty()) {
    options.target = environment.server;
    connection.origin = ServerOrigin::kEnvironment;
  } else if (!from.server.empty()) {
    options.target = from.server;
    connection.origin = ServerOrigin::kContext;
  } else {
    options.target = environment.default_server;
    connection.origin = ServerOrigin::kDefault;
  }

  // 3. TLS: each file from its flag, else from the context.
  options.tls_ca_file = flags.tls_ca.value_or(from.tls_ca);
  options.tls_cert_file = flags.cert.value_or(from.cert);
  options.tls_key_file = flags.key.value_or(from.key);
  options.tls_server_name =
      flags.tls_server_name.value_or(from.tls_server_name);

  // 4. The bearer token: one source, the first there is.
  if (flags.token.has_value()) {
    options.token = *flags.token;
  } else if (flags.token_file.has_value()) {
    options.token_file = *flags.token_file;
  } else if (!environment.token.empty()) {
    options.token = environment.token;
  } else {
    options.token_file = from.token_file;
  }
  return connection;
}

}  // namespace kq::cli
