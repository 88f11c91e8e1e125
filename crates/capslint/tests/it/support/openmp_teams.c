#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

static int threads_now(void) {
  FILE *f = fopen("/proc/self/status", "r"); char line[256]; int n = -1;
  while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
  if (f) fclose(f); return n;
}
static double cpu_seconds(void) {
  struct rusage u; getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
int main(void) {
  int product = 0, peak = 0;
  #pragma omp parallel
  {
    int a = omp_get_num_threads();
    #pragma omp parallel
    {
      int b = omp_get_num_threads();
      #pragma omp parallel
      {
        int c = omp_get_num_threads();
        #pragma omp barrier
        int n = threads_now();
        #pragma omp critical
        { if (a * b * c > product) product = a * b * c; if (n > peak) peak = n; }
        #pragma omp barrier
      }
    }
  }
  /* Spinning: thread 0 sleeps while the others wait at the barrier. */
  double before = cpu_seconds();
  int team = 0;
  #pragma omp parallel
  {
    #pragma omp single nowait
    team = omp_get_num_threads();
    if (omp_get_thread_num() == 0) usleep(300000);
    #pragma omp barrier
  }
  double spent = cpu_seconds() - before;
  printf("{\"team_product\": %d, \"os_threads_peak\": %d, \"spin_team\": %d, \"idle_cpu_ms\": %d}\n",
         product, peak, team, (int)(spent * 1000));
  return 0;
}
