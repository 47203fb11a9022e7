#include "shim/kube/transport.h"

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"

namespace kq::shim::kube {
namespace {

// Idle handles kept for reuse; more are opened when needed and closed on
// return beyond this.
constexpr size_t kMaxIdleHandles = 8;
// How often a stream checks its stop flag while the server is silent.
constexpr int kStopPollMillis = 100;
// Longest Retry-After honoured, so a misbehaving server cannot park a call.
constexpr absl::Duration kMaxRetryAfter = absl::Seconds(30);

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path,
                                          absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " \"", path, "\": ", std::strerror(errno)));
  }
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

bool StopRequested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

// Sleeps for `duration` in short slices; false if `stop` was set meanwhile.
bool SleepUnlessStopped(absl::Duration duration,
                        const std::atomic<bool>* stop) {
  const absl::Time deadline = absl::Now() + duration;
  while (!StopRequested(stop)) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    absl::SleepFor(std::min(left, absl::Milliseconds(kStopPollMillis)));
  }
  return false;
}

// Exponential backoff with "equal jitter": half the step is fixed, half
// random, so concurrent clients spread out but never retry at once.
class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max)
      : next_(initial), max_(max) {}

  absl::Duration Next() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const absl::Duration step = next_;
    next_ = std::min(next_ * 2, max_);
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    return step * jitter(rng);
  }

 private:
  absl::Duration next_;
  const absl::Duration max_;
};

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Headers = std::unique_ptr<curl_slist, SlistDeleter>;

// What one attempt collects from libcurl's callbacks.
struct Exchange {
  CURL* handle = nullptr;
  std::string body;
  std::string retry_after;
  // Streaming: a 2xx body goes to `on_data` instead of `body`.
  const std::function<bool(absl::string_view)>* on_data = nullptr;
  bool delivered = false;
  bool consumer_done = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  const size_t n = size * count;
  if (exchange->on_data != nullptr) {
    long code = 0;
    curl_easy_getinfo(exchange->handle, CURLINFO_RESPONSE_CODE, &code);
    if (code >= 200 && code < 300) {
      exchange->delivered = true;
      if (!(*exchange->on_data)(absl::string_view(data, n))) {
        exchange->consumer_done = true;
        return 0;  // Aborts the transfer with CURLE_WRITE_ERROR.
      }
      return n;
    }
  }
  exchange->body.append(data, n);
  return n;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  const size_t n = size * count;
  absl::string_view line(data, n);
  // A new status line starts a new response (after 100 Continue): forget
  // the previous one's headers.
  if (absl::StartsWith(line, "HTTP/")) {
    exchange->retry_after.clear();
  } else if (absl::StartsWithIgnoreCase(line, "retry-after:")) {
    exchange->retry_after = std::string(
        absl::StripAsciiWhitespace(line.substr(sizeof("retry-after:") - 1)));
  }
  return n;
}

// Transport failures that another attempt cannot fix.
bool IsPermanentCurlError(CURLcode code) {
  switch (code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_NOT_BUILT_IN:
      return true;
    default:
      return false;
  }
}

bool IsRetryableHttp(int status) { return status == 429 || status >= 500; }

std::string PathOnly(absl::string_view path_and_query) {
  return std::string(path_and_query.substr(0, path_and_query.find('?')));
}

// The final status once the retries are spent: UNAVAILABLE, saying so.
absl::Status GaveUp(const absl::Status& last, int attempts) {
  if (attempts <= 1) return absl::UnavailableError(last.message());
  return absl::UnavailableError(
      absl::StrCat(last.message(), " (after ", attempts, " attempts)"));
}

}  // namespace

std::string QueryEscape(absl::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

absl::Status StatusFromHttp(const HttpRequest& request, int http_status,
                            absl::string_view body) {
  std::string message;
  std::string reason;
  const nlohmann::json status =
      nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (status.is_object()) {
    if (auto it = status.find("message");
        it != status.end() && it->is_string()) {
      message = it->get<std::string>();
    }
    if (auto it = status.find("reason");
        it != status.end() && it->is_string()) {
      reason = it->get<std::string>();
    }
  }
  if (message.empty()) {
    // Not a Status (a proxy's page, say): quote a bounded prefix.
    message = std::string(absl::StripAsciiWhitespace(body.substr(0, 200)));
  }
  std::string text = absl::StrCat(request.method, " ", PathOnly(request.path),
                                  ": ", message, " (HTTP ", http_status,
                                  reason.empty() ? "" : " ", reason, ")");
  switch (http_status) {
    case 400:
    case 406:
    case 413:
    case 415:
    case 422:
      return absl::InvalidArgumentError(text);
    case 401:
      return absl::UnauthenticatedError(text);
    case 403:
      return absl::PermissionDeniedError(text);
    case 404:
      return absl::NotFoundError(text);
    case 405:
      return absl::UnimplementedError(text);
    case 409:
      // The API server says AlreadyExists for a create of a taken name and
      // Conflict for a stale resourceVersion or a failed precondition.
      if (reason == "AlreadyExists" ||
          (reason.empty() && request.method == "POST")) {
        return absl::AlreadyExistsError(text);
      }
      return absl::AbortedError(text);
    case 410:
      return absl::OutOfRangeError(text);
    case 412:
      return absl::FailedPreconditionError(text);
    default:
      break;
  }
  if (IsRetryableHttp(http_status)) return absl::UnavailableError(text);
  return absl::UnknownError(text);
}

struct HttpTransport::Impl {
  std::string server;  // without a trailing slash
  ClientOptions options;
  std::string ca_pem;
  std::string cert_pem;
  std::string key_pem;
  bool insecure = false;
  std::string token;
  std::string token_file;

  absl::Mutex mu;
  std::vector<CURL*> idle ABSL_GUARDED_BY(mu);

  ~Impl() {
    absl::MutexLock lock(&mu);
    for (CURL* handle : idle) curl_easy_cleanup(handle);
  }

  CURL* Acquire() {
    {
      absl::MutexLock lock(&mu);
      if (!idle.empty()) {
        CURL* handle = idle.back();
        idle.pop_back();
        return handle;
      }
    }
    return curl_easy_init();
  }

  void Release(CURL* handle) {
    // Reset drops the options but keeps the handle's open connections and
    // TLS sessions, which is the point of pooling.
    curl_easy_reset(handle);
    {
      absl::MutexLock lock(&mu);
      if (idle.size() < kMaxIdleHandles) {
        idle.push_back(handle);
        return;
      }
    }
    curl_easy_cleanup(handle);
  }

  absl::StatusOr<std::string> BearerToken() const {
    if (!token.empty() || token_file.empty()) return token;
    // Re-read every time: projected service-account tokens rotate. Not
    // NOT_FOUND, which callers read as "the object is gone".
    absl::StatusOr<std::string> data =
        ReadWholeFile(token_file, "bearer token file");
    if (!data.ok()) {
      return absl::UnauthenticatedError(data.status().message());
    }
    return std::string(absl::StripAsciiWhitespace(*data));
  }

  // Sets everything but the streaming callbacks for one attempt. `headers`
  // and `error` must outlive the transfer.
  absl::Status Prepare(CURL* handle, const HttpRequest& request,
                       absl::Duration timeout, Exchange& exchange,
                       Headers& headers, char* error) {
    KQ_ASSIGN_OR_RETURN(std::string bearer, BearerToken());
    curl_slist* list = nullptr;
    list = curl_slist_append(list, "Accept: application/json");
    // libcurl would otherwise wait for 100 Continue on large bodies.
    list = curl_slist_append(list, "Expect:");
    if (!request.body.empty()) {
      list = curl_slist_append(
          list, absl::StrCat("Content-Type: ", request.content_type).c_str());
    }
    if (!bearer.empty()) {
      list = curl_slist_append(
          list, absl::StrCat("Authorization: Bearer ", bearer).c_str());
    }
    headers.reset(list);

    const std::string url = server + request.path;
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_USERAGENT, options.user_agent.c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnBody);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &exchange);
    curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &OnHeader);
    curl_easy_setopt(handle, CURLOPT_HEADERDATA, &exchange);
    const long timeout_ms = static_cast<long>(
        std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout)));
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(
        handle, CURLOPT_CONNECTTIMEOUT_MS,
        std::min<long>(timeout_ms, static_cast<long>(absl::ToInt64Milliseconds(
                                       options.request_timeout))));
    // Notice a dead peer on long idle watches.
    curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(handle, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(handle, CURLOPT_TCP_KEEPINTVL, 15L);

    if (request.method == "GET") {
      curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (!request.body.empty()) {
      curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
      curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.data());
    }

    if (insecure) {
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!ca_pem.empty()) {
      // Only the configured CA, as kubectl: not the system's bundle too.
      curl_easy_setopt(handle, CURLOPT_CAPATH, nullptr);
      curl_easy_setopt(handle, CURLOPT_CAINFO, nullptr);
      curl_blob blob{ca_pem.data(), ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(handle, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (!cert_pem.empty()) {
      curl_blob cert{cert_pem.data(), cert_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(handle, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(handle, CURLOPT_SSLCERTTYPE, "PEM");
      curl_blob key{key_pem.data(), key_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(handle, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(handle, CURLOPT_SSLKEYTYPE, "PEM");
    }
    return absl::OkStatus();
  }

  absl::Status TransportError(const HttpRequest& request, CURLcode code,
                              const char* error) const {
    std::string detail = error[0] != '\0' ? error : curl_easy_strerror(code);
    const bool tls = code == CURLE_PEER_FAILED_VERIFICATION ||
                     code == CURLE_SSL_CACERT_BADFILE ||
                     code == CURLE_SSL_CONNECT_ERROR ||
                     code == CURLE_SSL_CERTPROBLEM;
    return absl::UnavailableError(absl::StrCat(request.method, " ", server,
                                               PathOnly(request.path), ": ",
                                               tls ? "TLS: " : "", detail));
  }

  // How long to wait before the next attempt: the server's Retry-After
  // (whole seconds, as the API server sends it) or the backoff's next step.
  absl::Duration RetryDelay(Backoff& backoff,
                            const std::string& retry_after) const {
    int64_t seconds = 0;
    if (!retry_after.empty() && absl::SimpleAtoi(retry_after, &seconds) &&
        seconds >= 0) {
      return std::min(absl::Seconds(seconds), kMaxRetryAfter);
    }
    return backoff.Next();
  }
};

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

HttpTransport::~HttpTransport() = default;

absl::StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Create(
    const Config& config, const ClientOptions& options) {
  GlobalInitOnce();
  if (!absl::StartsWith(config.server, "https://") &&
      !absl::StartsWith(config.server, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("server \"", config.server,
                     "\": must be an https:// (or http://) URL"));
  }
  auto impl = std::make_unique<Impl>();
  impl->server = config.server;
  while (!impl->server.empty() && impl->server.back() == '/') {
    impl->server.pop_back();
  }
  impl->options = options;
  impl->options.max_attempts = std::max(1, options.max_attempts);
  impl->insecure = config.insecure_skip_tls_verify;
  // Inline data wins over a file, as in client-go.
  impl->ca_pem = config.certificate_authority_data;
  if (impl->ca_pem.empty() && !config.certificate_authority_file.empty()) {
    KQ_ASSIGN_OR_RETURN(impl->ca_pem,
                        ReadWholeFile(config.certificate_authority_file,
                                      "certificate authority file"));
  }
  impl->cert_pem = config.client_certificate_data;
  if (impl->cert_pem.empty() && !config.client_certificate_file.empty()) {
    KQ_ASSIGN_OR_RETURN(impl->cert_pem,
                        ReadWholeFile(config.client_certificate_file,
                                      "client certificate file"));
  }
  impl->key_pem = config.client_key_data;
  if (impl->key_pem.empty() && !config.client_key_file.empty()) {
    KQ_ASSIGN_OR_RETURN(impl->key_pem, ReadWholeFile(config.client_key_file,
                                                     "client key file"));
  }
  if (impl->cert_pem.empty() != impl->key_pem.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs its client key and the other way round");
  }
  impl->token = config.bearer_token;
  impl->token_file = config.bearer_token_file;
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
}

absl::StatusOr<HttpResponse> HttpTransport::Send(const HttpRequest& request) {
  Impl& impl = *impl_;
  Backoff backoff(impl.options.initial_backoff, impl.options.max_backoff);
  absl::Status last;
  for (int attempt = 1;; ++attempt) {
    CURL* handle = impl.Acquire();
    if (handle == nullptr) return absl::InternalError("curl_easy_init failed");
    Exchange exchange;
    exchange.handle = handle;
    Headers headers;
    char error[CURL_ERROR_SIZE] = {0};
    absl::Status prepared =
        impl.Prepare(handle, request, impl.options.request_timeout, exchange,
                     headers, error);
    if (!prepared.ok()) {
      impl.Release(handle);
      return prepared;
    }
    const CURLcode code = curl_easy_perform(handle);
    long http_status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &http_status);
    impl.Release(handle);

    if (code != CURLE_OK) {
      last = impl.TransportError(request, code, error);
      if (IsPermanentCurlError(code)) return last;
    } else if (http_status >= 200 && http_status < 300) {
      return HttpResponse{static_cast<int>(http_status),
                          std::move(exchange.body)};
    } else {
      last =
          StatusFromHttp(request, static_cast<int>(http_status), exchange.body);
      if (!IsRetryableHttp(static_cast<int>(http_status))) return last;
    }
    if (attempt >= impl.options.max_attempts) break;
    absl::SleepFor(impl.RetryDelay(backoff, exchange.retry_after));
  }
  return GaveUp(last, impl.options.max_attempts);
}

absl::Status HttpTransport::Stream(
    const HttpRequest& request, absl::Duration timeout,
    const std::atomic<bool>* stop,
    const std::function<bool(absl::string_view)>& on_data) {
  Impl& impl = *impl_;
  Backoff backoff(impl.options.initial_backoff, impl.options.max_backoff);
  absl::Status last;
  for (int attempt = 1;; ++attempt) {
    if (StopRequested(stop)) return absl::CancelledError("stopped");
    // A handle of its own, driven through a multi handle so the loop below
    // wakes every kStopPollMillis even when the server sends nothing.
    CURL* handle = curl_easy_init();
    CURLM* multi = curl_multi_init();
    if (handle == nullptr || multi == nullptr) {
      if (handle != nullptr) curl_easy_cleanup(handle);
      if (multi != nullptr) curl_multi_cleanup(multi);
      return absl::InternalError("curl init failed");
    }
    Exchange exchange;
    exchange.handle = handle;
    exchange.on_data = &on_data;
    Headers headers;
    char error[CURL_ERROR_SIZE] = {0};
    absl::Status prepared =
        impl.Prepare(handle, request, timeout, exchange, headers, error);
    if (!prepared.ok()) {
      curl_multi_cleanup(multi);
      curl_easy_cleanup(handle);
      return prepared;
    }
    curl_multi_add_handle(multi, handle);
    bool cancelled = false;
    CURLcode code = CURLE_OK;
    absl::Status multi_error;
    for (;;) {
      int running = 0;
      CURLMcode mc = curl_multi_perform(multi, &running);
      if (mc != CURLM_OK) {
        multi_error = absl::InternalError(
            absl::StrCat("curl_multi_perform: ", curl_multi_strerror(mc)));
        break;
      }
      if (running == 0) {
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
          if (msg->msg == CURLMSG_DONE) code = msg->data.result;
        }
        break;
      }
      if (StopRequested(stop)) {
        cancelled = true;
        break;
      }
      mc = curl_multi_poll(multi, nullptr, 0, kStopPollMillis, nullptr);
      if (mc != CURLM_OK) {
        multi_error = absl::InternalError(
            absl::StrCat("curl_multi_poll: ", curl_multi_strerror(mc)));
        break;
      }
    }
    long http_status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &http_status);
    curl_multi_remove_handle(multi, handle);
    curl_multi_cleanup(multi);
    curl_easy_cleanup(handle);

    if (cancelled) return absl::CancelledError("stopped");
    if (!multi_error.ok()) return multi_error;
    if (exchange.consumer_done) return absl::OkStatus();
    if (code == CURLE_OK) {
      if (http_status >= 200 && http_status < 300) return absl::OkStatus();
      last =
          StatusFromHttp(request, static_cast<int>(http_status), exchange.body);
      if (!IsRetryableHttp(static_cast<int>(http_status))) return last;
    } else if (exchange.delivered) {
      // Our own deadline on a stream the server should have ended by now.
      if (code == CURLE_OPERATION_TIMEDOUT) return absl::OkStatus();
      return impl.TransportError(request, code, error);
    } else {
      last = impl.TransportError(request, code, error);
      if (IsPermanentCurlError(code)) return last;
    }
    if (attempt >= impl.options.max_attempts) break;
    if (!SleepUnlessStopped(impl.RetryDelay(backoff, exchange.retry_after),
                            stop)) {
      return absl::CancelledError("stopped");
    }
  }
  return GaveUp(last, impl.options.max_attempts);
}

}  // namespace kq::shim::kube
