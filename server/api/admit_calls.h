#pragma once

// Serves QueueService.Admit with gRPC's completion-queue API: a call waiting
// for its workload's admission holds no thread, only its place here, and
// the engine's answer finishes it from the engine thread. (When Admit was
// kqd's only callback method, gRPC's completion threads, which take part in
// polling the server's sockets and sleep 100 ms when idle, held about 1% of
// every call to kqd up by ~100 ms. kqd's busiest calls are callback
// methods now, and bench/RESULTS.md's tail probes of 2026-11-30 17:17 found
// no such wait; Admit, whose calls wait long, stays here.)
//
// Example:
//   grpc::ServerBuilder builder;
//   builder.RegisterService(&queue_service);
//   std::unique_ptr<grpc::ServerCompletionQueue> cq =
//       builder.AddCompletionQueue();
//   std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
//   AdmitCalls admit(queue_service, engine, std::move(cq));
//   admit.Start();
//   ...
//   server->Shutdown(deadline);
//   admit.Stop();

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <thread>

#include "server/api/services.h"
#include "server/engine/engine.h"

namespace kq::api {

// Thread-safe: Start and Stop from one thread; the rest runs on its own
// thread and the engine's.
class AdmitCalls {
 public:
  AdmitCalls(QueueServiceImpl& service, engine::Engine& engine,
             std::unique_ptr<grpc::ServerCompletionQueue> cq);
  ~AdmitCalls();
  AdmitCalls(const AdmitCalls&) = delete;
  AdmitCalls& operator=(const AdmitCalls&) = delete;

  // Accepts calls until Stop.
  void Start();
  // After the server's Shutdown: drains the queue and joins the thread.
  void Stop();

 private:
  class Call;
  void Loop();

  QueueServiceImpl& service_;
  engine::Engine& engine_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::thread thread_;
  std::mutex mu_;
  bool stopping_ = false;  // guarded by mu_
};

}  // namespace kq::api
