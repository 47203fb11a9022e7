#include "server/api/admit_calls.h"

#include <mutex>
#include <utility>

#include "absl/time/time.h"

#include "server/api/authorization.h"
#include "server/api/status_convert.h"

namespace kq::api {

// One Admit call, from being requested until gRPC is done with it. Two
// events end it, in either order: the Finish it was given completes, and
// gRPC reports the call done (answered or cancelled). The engine's answer
// and the client's cancellation race to Finish it; the first wins.
class AdmitCalls::Call {
 public:
  // What a completion-queue event is about.
  struct Tag {
    Call* call;
    enum Kind { kStarted, kDone, kFinished } kind;
  };

  // Requests the next Admit call from `service`.
  Call(QueueServiceImpl& service, engine::Engine& engine,
       grpc::ServerCompletionQueue* cq)
      : service_(service),
        engine_(engine),
        shared_(std::make_shared<Shared>()) {
    shared_->responder = &responder_;
    shared_->finished_tag = &finished_;
    context_.AsyncNotifyWhenDone(&done_);
    service.RequestAdmit(&context_, &request_, &responder_, cq, cq, &started_);
  }

  // Returns whether the call is over (the caller deletes it).
  bool Handle(Tag::Kind kind, bool ok) {
    switch (kind) {
      case Tag::kStarted:
        if (!ok) return true;  // shutting down: no call came
        Begin();
        return false;
      case Tag::kDone:
        done_seen_ = true;
        if (context_.IsCancelled()) {
          bool first = false;
          {
            std::lock_guard<std::mutex> lock(shared_->mu);
            first = !shared_->finished;
            shared_->finished = true;
          }
          if (first) {
            engine_.CancelAdmit(id_);
            responder_.FinishWithError(
                grpc::Status(grpc::StatusCode::CANCELLED, "Admit cancelled"),
                &finished_);
          }
        }
        return finish_seen_;
      case Tag::kFinished:
        finish_seen_ = true;
        return done_seen_;
    }
    return false;
  }

 private:
  struct Shared {
    std::mutex mu;
    bool finished = false;
    grpc::ServerAsyncResponseWriter<v1::AdmitResponse>* responder = nullptr;
    Tag* finished_tag = nullptr;
    v1::AdmitResponse response;
  };

  void Begin() {
    const auto chrono_deadline = context_.deadline();
    const absl::Time call_deadline =
        chrono_deadline == std::chrono::system_clock::time_point::max()
            ? absl::InfiniteFuture()
            : absl::FromChrono(chrono_deadline);
    absl::StatusOr<auth::Principal> principal =
        service_.AuthorizeAdmit(context_, request_);
    if (!principal.ok()) {
      FinishOnce(ToGrpcStatus(principal.status()));
      return;
    }
    absl::StatusOr<engine::AdmitWait> wait =
        AdmitWaitOf(request_, call_deadline);
    if (!wait.ok()) {
      FinishOnce(ToGrpcStatus(wait.status()));
      return;
    }
    if (wait->submit.has_value()) {
      StampSubmitter(*principal, service_.access_enabled(), *wait->submit);
    }
    std::shared_ptr<Shared> shared = shared_;
    const v1::TemplateForm form = request_.template_form();
    // The engine may answer before Admit returns, and after the call was
    // cancelled: it only touches `shared`.
    id_ = engine_.Admit(
        *std::move(wait),
        [shared, form](absl::StatusOr<engine::AdmitOutcome> outcome) {
          std::lock_guard<std::mutex> lock(shared->mu);
          if (shared->finished) return;
          shared->finished = true;
          if (!outcome.ok()) {
            shared->responder->FinishWithError(ToGrpcStatus(outcome.status()),
                                               shared->finished_tag);
            return;
          }
          FillAdmitResponse(*outcome, form, &shared->response);
          shared->responder->Finish(shared->response, grpc::Status::OK,
                                    shared->finished_tag);
        });
  }

  void FinishOnce(const grpc::Status& status) {
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (shared_->finished) return;
    shared_->finished = true;
    responder_.FinishWithError(status, &finished_);
  }

  QueueServiceImpl& service_;
  engine::Engine& engine_;
  grpc::ServerContext context_;
  v1::AdmitRequest request_;
  grpc::ServerAsyncResponseWriter<v1::AdmitResponse> responder_{&context_};
  std::shared_ptr<Shared> shared_;
  Tag started_{this, Tag::kStarted};
  Tag done_{this, Tag::kDone};
  Tag finished_{this, Tag::kFinished};
  int64_t id_ = 0;
  bool done_seen_ = false;
  bool finish_seen_ = false;
};

AdmitCalls::AdmitCalls(QueueServiceImpl& service, engine::Engine& engine,
                       std::unique_ptr<grpc::ServerCompletionQueue> cq)
    : service_(service), engine_(engine), cq_(std::move(cq)) {}

AdmitCalls::~AdmitCalls() { Stop(); }

void AdmitCalls::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    new Call(service_, engine_, cq_.get());
  }
  thread_ = std::thread([this] { Loop(); });
}

void AdmitCalls::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    // No call is requested from here on: requesting one on a queue that
    // is shut down is an error.
    cq_->Shutdown();
  }
  if (thread_.joinable()) thread_.join();
}

void AdmitCalls::Loop() {
  void* raw;
  bool ok;
  while (cq_->Next(&raw, &ok)) {
    auto* tag = static_cast<Call::Tag*>(raw);
    if (tag->kind == Call::Tag::kStarted && ok) {
      // A call came: be ready for the next one.
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_) new Call(service_, engine_, cq_.get());
    }
    if (tag->call->Handle(tag->kind, ok)) delete tag->call;
  }
}

}  // namespace kq::api
