#include "server/auth/grpc_access.h"

#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"

namespace kq::auth {
namespace {

std::string ToString(grpc::string_ref s) {
  return std::string(s.data(), s.size());
}

Credentials CredentialsOf(const grpc::ServerContextBase& context) {
  Credentials c;
  if (std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
      auth != nullptr) {
    std::vector<grpc::string_ref> pem =
        auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
    if (!pem.empty()) c.verified_certificate = ToString(pem.front());
  }
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    c.authorization = ToString(it->second);
  }
  if (auto it = metadata.find("impersonate-user"); it != metadata.end()) {
    c.impersonate_user = ToString(it->second);
  }
  auto groups = metadata.equal_range("impersonate-group");
  for (auto it = groups.first; it != groups.second; ++it) {
    c.impersonate_groups.push_back(ToString(it->second));
  }
  return c;
}

// "ipv4:127.0.0.1:5000" -> "127.0.0.1"; "ipv6:[::1]:5000" -> "::1".
std::string SourceIp(const std::string& peer) {
  std::string rest = peer;
  if (absl::StartsWith(rest, "ipv4:")) {
    rest = rest.substr(5);
    return rest.substr(0, rest.rfind(':'));
  }
  if (absl::StartsWith(rest, "ipv6:")) {
    rest = rest.substr(5);
    if (absl::StartsWith(rest, "[")) {
      return rest.substr(1, rest.find(']') - 1);
    }
    return rest;
  }
  return peer;
}

}  // namespace

struct GrpcAccess::Call {
  absl::Mutex mu;
  AuditEvent event ABSL_GUARDED_BY(mu);
  bool decided ABSL_GUARDED_BY(mu) = false;
};

class GrpcAccess::Interceptor final : public grpc::experimental::Interceptor {
 public:
  Interceptor(GrpcAccess& access, grpc::experimental::ServerRpcInfo* info)
      : access_(access), info_(info) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      Begin();
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      End(methods);
    }
    methods->Proceed();
  }

 private:
  void Begin() {
    const grpc::ServerContextBase* context = info_->server_context();
    auto call = std::make_shared<Call>();
    {
      absl::MutexLock lock(&call->mu);
      AuditEvent& e = call->event;
      e.audit_id = NewAuditId();
      e.received = absl::Now();
      e.method = info_->method();
      e.source_ip = SourceIp(context->peer());
      const auto& metadata = context->client_metadata();
      if (auto it = metadata.find("user-agent"); it != metadata.end()) {
        e.user_agent = ToString(it->second);
      }
    }
    absl::MutexLock lock(&access_.mu_);
    access_.calls_[context] = std::move(call);
  }

  void End(grpc::experimental::InterceptorBatchMethods* methods) {
    std::shared_ptr<Call> call;
    {
      absl::MutexLock lock(&access_.mu_);
      auto it = access_.calls_.find(info_->server_context());
      if (it == access_.calls_.end()) return;
      call = std::move(it->second);
      access_.calls_.erase(it);
    }
    const grpc::Status status = methods->GetSendStatus();
    AuditEvent event;
    {
      absl::MutexLock lock(&call->mu);
      event = std::move(call->event);
      if (!call->decided) {
        event.reason = "the call ended before it was authorized";
      }
    }
    event.completed = absl::Now();
    event.code = status.error_code();
    event.message = status.error_message();
    methods->GetSendTrailingMetadata()->emplace(kAuditIdKey, event.audit_id);
    access_.audit_->Record(std::move(event));
  }

  GrpcAccess& access_;
  grpc::experimental::ServerRpcInfo* info_;
};

class GrpcAccess::Factory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit Factory(GrpcAccess& access) : access_(access) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    // kq's own services; health checks and reflection are not audited.
    if (!absl::StartsWith(info->method(), "/kq.")) return nullptr;
    return new Interceptor(access_, info);
  }

 private:
  GrpcAccess& access_;
};

GrpcAccess::GrpcAccess(Access& access, AuditLog* audit)
    : access_(access), audit_(audit) {}

GrpcAccess::~GrpcAccess() = default;

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
GrpcAccess::NewAuditInterceptorFactory() {
  if (audit_ == nullptr) return nullptr;
  return std::make_unique<Factory>(*this);
}

std::shared_ptr<GrpcAccess::Call> GrpcAccess::CallOf(
    const grpc::ServerContextBase& context) {
  if (audit_ == nullptr) return nullptr;
  absl::MutexLock lock(&mu_);
  auto it = calls_.find(&context);
  return it == calls_.end() ? nullptr : it->second;
}

absl::StatusOr<Principal> GrpcAccess::Authenticate(
    const grpc::ServerContextBase& context) {
  absl::StatusOr<Principal> principal =
      access_.Authenticate(CredentialsOf(context));
  if (std::shared_ptr<Call> call = CallOf(context)) {
    absl::MutexLock lock(&call->mu);
    if (principal.ok()) {
      call->event.principal = *principal;
    } else {
      call->decided = true;
      call->event.allowed = false;
      call->event.reason = std::string(principal.status().message());
    }
  }
  return principal;
}

void GrpcAccess::Record(const grpc::ServerContextBase& context,
                        const Attributes& request, const Decision& decision) {
  std::shared_ptr<Call> call = CallOf(context);
  if (call == nullptr) return;
  absl::MutexLock lock(&call->mu);
  AuditEvent& e = call->event;
  // The first refusal is what the caller hears; with none, the first
  // request names the call.
  if (call->decided && (!e.allowed || decision.allowed)) return;
  call->decided = true;
  e.allowed = decision.allowed;
  e.reason = decision.reason;
  DescribeRequest(request, e);
}

absl::Status GrpcAccess::Authorize(const grpc::ServerContextBase& context,
                                   const Principal& principal,
                                   const Attributes& request) {
  Decision decision = access_.Authorize(principal, request);
  Record(context, request, decision);
  if (decision.allowed) return absl::OkStatus();
  return absl::PermissionDeniedError(decision.reason);
}

bool GrpcAccess::Allows(const Principal& principal,
                        const Attributes& request) const {
  return access_.Authorize(principal, request).allowed;
}

void GrpcAccess::RecordAllowed(const grpc::ServerContextBase& context,
                               const Attributes& request, std::string reason) {
  std::shared_ptr<Call> call = CallOf(context);
  if (call == nullptr) return;
  absl::MutexLock lock(&call->mu);
  call->decided = true;
  call->event.allowed = true;
  call->event.reason = std::move(reason);
  DescribeRequest(request, call->event);
}

absl::StatusOr<Principal> GrpcAccess::Check(
    const grpc::ServerContextBase& context, const Attributes& request) {
  absl::StatusOr<Principal> principal = Authenticate(context);
  if (!principal.ok()) {
    // The refusal names what was asked, for the audit log.
    if (std::shared_ptr<Call> call = CallOf(context)) {
      absl::MutexLock lock(&call->mu);
      DescribeRequest(request, call->event);
    }
    return principal;
  }
  if (absl::Status s = Authorize(context, *principal, request); !s.ok()) {
    return s;
  }
  return principal;
}

}  // namespace kq::auth
