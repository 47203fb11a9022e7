#include "server/auth/auth_metrics.h"

namespace kq::auth {

AuthMetrics::AuthMetrics(prometheus::Registry& registry)
    : authn_failures_(prometheus::BuildCounter()
                          .Name("kq_authn_failures_total")
                          .Help("Calls refused as UNAUTHENTICATED, by reason "
                                "(missing, unknown_token, malformed, "
                                "impersonation).")
                          .Register(registry)),
      decisions_(prometheus::BuildCounter()
                     .Name("kq_authz_decisions_total")
                     .Help("Authorization decisions, by decision (allow, "
                           "forbid).")
                     .Register(registry)),
      allowed_(decisions_.Add({{"decision", "allow"}})),
      forbidden_(decisions_.Add({{"decision", "forbid"}})),
      audit_written_(prometheus::BuildCounter()
                         .Name("kq_audit_events_total")
                         .Help("Audit events written to --audit-log.")
                         .Register(registry)
                         .Add({})),
      audit_dropped_(prometheus::BuildCounter()
                         .Name("kq_audit_events_dropped_total")
                         .Help("Audit events dropped because the audit "
                               "writer fell behind (its queue was full).")
                         .Register(registry)
                         .Add({})),
      reloads_(prometheus::BuildCounter()
                   .Name("kq_auth_policy_reloads_total")
                   .Help("Reloads of --token-file and --authz-file, by file "
                         "and result (success; failure keeps the old one).")
                   .Register(registry)),
      expiry_(prometheus::BuildGauge()
                  .Name("kq_tls_certificate_expiry_timestamp_seconds")
                  .Help("notAfter of the certificate in use, by cert "
                        "(server, client_ca), in Unix seconds.")
                  .Register(registry)) {}

void AuthMetrics::AuthenticationFailed(const std::string& reason) {
  authn_failures_.Add({{"reason", reason}}).Increment();
}

void AuthMetrics::Decided(bool allowed) {
  (allowed ? allowed_ : forbidden_).Increment();
}

void AuthMetrics::Reloaded(const std::string& file, bool ok) {
  reloads_.Add({{"file", file}, {"result", ok ? "success" : "failure"}})
      .Increment();
}

void AuthMetrics::CertificateExpiry(const std::string& cert,
                                    absl::Time not_after) {
  expiry_.Add({{"cert", cert}})
      .Set(absl::ToDoubleSeconds(not_after - absl::UnixEpoch()));
}

}  // namespace kq::auth
