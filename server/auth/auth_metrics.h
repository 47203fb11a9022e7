#pragma once

// kq's security metrics: authentication failures by reason, authorization
// decisions, audit events written and dropped, policy reloads, and the
// expiry of the serving certificate and client CA (for alerts before they
// lapse).

#include <string>

#include "absl/time/time.h"

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace kq::auth {

class AuthMetrics {
 public:
  // Registers its families in `registry`, which must outlive this.
  explicit AuthMetrics(prometheus::Registry& registry);

  // `reason`: missing, unknown_token, malformed, impersonation.
  void AuthenticationFailed(const std::string& reason);
  void Decided(bool allowed);
  void AuditWritten() { audit_written_.Increment(); }
  void AuditDropped() { audit_dropped_.Increment(); }
  // `file`: tokens, authz; `ok`: whether the new file is in force.
  void Reloaded(const std::string& file, bool ok);
  // `cert`: server, client_ca.
  void CertificateExpiry(const std::string& cert, absl::Time not_after);

 private:
  prometheus::Family<prometheus::Counter>& authn_failures_;
  prometheus::Family<prometheus::Counter>& decisions_;
  prometheus::Counter& allowed_;
  prometheus::Counter& forbidden_;
  prometheus::Counter& audit_written_;
  prometheus::Counter& audit_dropped_;
  prometheus::Family<prometheus::Counter>& reloads_;
  prometheus::Family<prometheus::Gauge>& expiry_;
};

}  // namespace kq::auth
