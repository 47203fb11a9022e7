#include "tests/testing/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kq::testing {
namespace {

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

// A child that starts `sleep` with DieWithParent, as KqdProcess starts kqd,
// and is then killed with SIGKILL, as ctest kills a test on a timeout: the
// sleep must die with it. The pid of the sleep comes back through a pipe.
TEST(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t test = fork();
  ASSERT_GE(test, 0);
  if (test == 0) {
    close(fds[0]);
    const ForkingParent parent = ThisParent();
    const pid_t sleeper = fork();
    if (sleeper == 0) {
      DieWithParent(parent);
      execlp("sleep", "sleep", "300", static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(fds[1], &sleeper, sizeof(sleeper));
    pause();
    _exit(0);
  }
  close(fds[1]);
  pid_t sleeper = 0;
  ASSERT_EQ(read(fds[0], &sleeper, sizeof(sleeper)),
            static_cast<ssize_t>(sizeof(sleeper)));
  close(fds[0]);
  // The sleeper is the test child's, and so invisible to waitpid here; once
  // killed it is reparented and reaped by init or a subreaper.
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(Alive(sleeper));
  kill(test, SIGKILL);
  waitpid(test, nullptr, 0);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (Alive(sleeper) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_FALSE(Alive(sleeper)) << "sleep " << sleeper << " outlived its parent";
  if (Alive(sleeper)) kill(sleeper, SIGKILL);
}

// A child forked by a helper thread must outlive that thread: the kernel's
// parent-death signal follows the forking thread, not the process
// (ClientTest.RetriesWhileKqdIsDown restarts kqd from a thread).
TEST(ChildProcessTest, ChildOfAHelperThreadOutlivesTheThread) {
  pid_t sleeper = -1;
  std::thread helper([&sleeper] {
    const ForkingParent parent = ThisParent();
    EXPECT_FALSE(parent.main_thread);
    sleeper = fork();
    if (sleeper == 0) {
      DieWithParent(parent);
      execlp("sleep", "sleep", "300", static_cast<char*>(nullptr));
      _exit(127);
    }
  });
  helper.join();
  ASSERT_GT(sleeper, 0);
  absl::SleepFor(absl::Milliseconds(200));
  int status = 0;
  EXPECT_EQ(waitpid(sleeper, &status, WNOHANG), 0) << "the sleep has ended";
  kill(sleeper, SIGKILL);
  waitpid(sleeper, &status, 0);
}

}  // namespace
}  // namespace kq::testing
