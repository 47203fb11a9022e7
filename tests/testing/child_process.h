#ifndef KQ_TESTS_TESTING_CHILD_PROCESS_H_
#define KQ_TESTS_TESTING_CHILD_PROCESS_H_

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kq::testing {

// The process about to fork a child, as the child needs to know it. Read in
// the parent, before fork().
struct ForkingParent {
  pid_t pid;
  bool main_thread;
};

inline ForkingParent ThisParent() {
  const pid_t pid = getpid();
  return {pid, static_cast<pid_t>(syscall(SYS_gettid)) == pid};
}

// Called in a test's child between fork() and exec(). The kernel then kills
// the child when the thread that forked it ends, however it ends: a test
// that ctest kills on a timeout, or that crashes, takes its kqd (or fixture,
// or shim) with it instead of leaving it to disturb the rest of the suite.
// Only a child of the main thread, which lives as long as the test, is
// marked: one forked by a helper thread would die with that thread.
// kq-test-reaper, which every test runs under, ends the others.
inline void DieWithParent(const ForkingParent& parent) {
  if (!parent.main_thread) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect.
  if (getppid() != parent.pid) _exit(127);
}

}  // namespace kq::testing

#endif  // KQ_TESTS_TESTING_CHILD_PROCESS_H_
