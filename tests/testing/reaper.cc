// kq-test-reaper COMMAND [ARG...]: runs one test so that nothing it starts
// outlives it. ctest runs every test through it (kq_add_test, kq_cc_test).
//
// ctest ends a test that overruns its timeout with SIGKILL to the test's own
// process only; whatever the test started (kqd, a fixture, a shim, munged)
// was left running, held the test's output pipe open and disturbed the tests
// after it. A process killed with SIGKILL cannot clean up, so the work is
// split in two:
//
//   kq-test-reaper (ctest's child) waits for
//     the shepherd, a child subreaper with a parent-death signal, which runs
//       the test.
//
// Every process the test leaves behind, daemonized or in a session of its
// own, is reparented to the shepherd instead of init. When the test exits,
// or when ctest kills kq-test-reaper and the kernel signals the shepherd, the
// shepherd kills all its descendants, reaps them, and ends as the test did:
// the same exit code, or the same signal.

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <vector>

namespace {

volatile sig_atomic_t parent_gone = 0;

void OnParentGone(int) { parent_gone = 1; }

// Every process by its parent, from /proc/PID/stat ("pid (comm) state ppid
// ..."; comm may hold spaces and parentheses, so the fields after the last
// ')').
std::multimap<pid_t, pid_t> ChildrenByParent() {
  std::multimap<pid_t, pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE* file = fopen(path, "r");
    if (file == nullptr) continue;
    char line[1024];
    const bool read = fgets(line, sizeof(line), file) != nullptr;
    fclose(file);
    if (!read) continue;
    const char* close = strrchr(line, ')');
    char state = 0;
    long ppid = 0;
    if (close != nullptr && sscanf(close + 1, " %c %ld", &state, &ppid) == 2) {
      children.emplace(static_cast<pid_t>(ppid), static_cast<pid_t>(pid));
    }
  }
  closedir(proc);
  return children;
}

// The processes below `root` (not root itself).
std::vector<pid_t> Descendants(pid_t root) {
  const std::multimap<pid_t, pid_t> children = ChildrenByParent();
  std::vector<pid_t> found;
  std::vector<pid_t> frontier = {root};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      found.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  return found;
}

void SleepMillis(long millis) {
  timespec delay = {millis / 1000, (millis % 1000) * 1000000};
  nanosleep(&delay, nullptr);
}

// Kills and reaps every descendant of this process until none is left (a
// dying process's children are reparented here, so the loop sees them
// next).
void KillEverything() {
  for (int round = 0;; ++round) {
    const std::vector<pid_t> left = Descendants(getpid());
    for (pid_t pid : left) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (left.empty()) {
      int status = 0;
      if (waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD) return;
    }
    if (round > 0 && round % 100 == 0) {
      fprintf(stderr, "kq-test-reaper: %zu processes still alive\n",
              left.size());
    }
    SleepMillis(10);
  }
}

// Ends this process as `status` says the test ended.
[[noreturn]] void EndAs(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    // Without a core file: the test's own crash made one if it could.
    prctl(PR_SET_DUMPABLE, 0);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    sigprocmask(SIG_UNBLOCK, &only, nullptr);
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

[[noreturn]] void Shepherd(pid_t reaper, char** command) {
  // OnParentGone must interrupt waitpid, so no SA_RESTART. SIGTERM is the
  // parent-death signal; SIGINT and SIGHUP reach the whole process group
  // when ctest is interrupted, and end the test's tree the same way. (The
  // test gets the default handlers back at exec.)
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = OnParentGone;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &action, nullptr);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The reaper died before prctl took effect: nobody waits for the test.
  if (getppid() != reaper) _exit(1);

  const pid_t test = fork();
  if (test < 0) {
    fprintf(stderr, "kq-test-reaper: fork: %s\n", strerror(errno));
    _exit(1);
  }
  if (test == 0) {
    signal(SIGTERM, SIG_DFL);
    execvp(command[0], command);
    fprintf(stderr, "kq-test-reaper: cannot run %s: %s\n", command[0],
            strerror(errno));
    _exit(127);
  }
  // Reaps orphans reparented here until the test itself exits, or until
  // the reaper is gone or an interrupt comes (waitpid then fails with
  // EINTR).
  int test_status = 0;
  while (!parent_gone) {
    int status = 0;
    const pid_t reaped = waitpid(-1, &status, 0);
    if (reaped == test) {
      test_status = status;
      break;
    }
  }
  KillEverything();
  if (parent_gone) _exit(1);  // nobody is left to read the status
  EndAs(test_status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: kq-test-reaper COMMAND [ARG...]\n");
    return 2;
  }
  const pid_t reaper = getpid();
  const pid_t shepherd = fork();
  if (shepherd < 0) {
    fprintf(stderr, "kq-test-reaper: fork: %s\n", strerror(errno));
    return 1;
  }
  if (shepherd == 0) Shepherd(reaper, argv + 1);
  int status = 0;
  while (waitpid(shepherd, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  EndAs(status);
}
