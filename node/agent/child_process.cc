#include "node/agent/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace swarmcast::node {
namespace {

int Decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

}  // namespace

Result<std::unique_ptr<ChildProcess>, std::string> ChildProcess::Start(
    const std::vector<std::string>& args, const std::vector<std::string>& env,
    const std::filesystem::path& out_file, const std::filesystem::path& err_file) {
  // Everything the child needs is made before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> argv_s = {"/proc/self/exe"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    const std::string_view key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const std::string& mine : env) {
      if (std::string_view(mine).substr(0, mine.find('=')) == key) replaced = true;
    }
    if (!replaced) env_s.emplace_back(kv);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int out =
      open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  const int err =
      open(err_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out < 0 || err < 0) {
    const std::string why = std::strerror(errno);
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    return Unexpected("cannot open the child's log files in " + out_file.parent_path().string() +
                      ": " + why);
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Dies with the agent, even by SIGKILL; and if the agent died between
    // fork and here, at once.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    // The agent blocks these for its signalfd; a child must see them.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  const int fork_errno = errno;
  close(out);
  close(err);
  if (pid < 0) return Unexpected(std::string("fork: ") + std::strerror(fork_errno));
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, out_file));
}

ChildProcess::~ChildProcess() {
  if (!status_) Stop(std::chrono::seconds(10));
}

std::optional<int> ChildProcess::Poll() {
  if (status_) return status_;
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) status_ = Decode(st);
  if (r < 0 && errno == ECHILD) status_ = -1;
  return status_;
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (Poll()) return *status_;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!Poll()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      int st = 0;
      waitpid(pid_, &st, 0);
      status_ = Decode(st);
      break;
    }
    // Reaping needs polling here: a transfer saving its resume data takes
    // a moment, and the loop that owns this child waits for nothing else.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return *status_;
}

}  // namespace swarmcast::node
