/* rusage.c: run a command and print its own CPU seconds and peak resident
 * memory, as "cpu_s peak_kb" on stderr's last line (bench/bench.py).
 *
 * Python cannot measure a child's peak memory by itself: a child forked
 * (or vforked) from the interpreter starts with the interpreter's resident
 * pages as its high-water mark, so every command would seem to need the
 * interpreter's 15-40 MB. This process is small, so the high-water mark of
 * the command it forks is the command's own. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rusage COMMAND [ARG...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("rusage: fork");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    perror("rusage: exec");
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("rusage: wait4");
    return 2;
  }
  double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
  fprintf(stderr, "%.6f %ld\n", cpu, ru.ru_maxrss);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
