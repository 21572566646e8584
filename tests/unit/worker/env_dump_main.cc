// A stand-in for kbench-runner in child_env_test: prints its working directory and environment to
// its output (the runner log), then exits, so the test sees what a runner child would inherit.
#include <unistd.h>

#include <cstdio>

extern char** environ;

int main() {
  char cwd[4096] = {0};
  std::printf("cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
  for (char** e = environ; e && *e; ++e) std::printf("env=%s\n", *e);
  return 0;
}
