/*
 * memfd_create(2) as the system call itself.
 *
 * glibc has had a wrapper only since 2.27, and the Linux wheels run on glibc 2.17 and newer
 * (manylinux2014): defining the function here keeps the binary free of that versioned import.
 * The kernel call is the same one glibc's wrapper makes (Linux 3.17 or newer; older kernels
 * answer ENOSYS, which the caller reports).
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

/* Old kernel headers (those of glibc 2.17 build images) lack the number. */
#ifndef SYS_memfd_create
#if defined(__x86_64__)
#define SYS_memfd_create 319
#elif defined(__aarch64__)
#define SYS_memfd_create 279
#else
#error "the memfd_create system call number of this architecture is not known here"
#endif
#endif

int memfd_create(const char *name, unsigned int flags) {
    return (int)syscall(SYS_memfd_create, name, flags);
}
