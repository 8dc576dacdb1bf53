// SPDX-License-Identifier: GPL-2.0
/*
 * hugememfd FD MB PROGRAM [ARG...]: the wrapper a memfd needs before a
 * program that takes a path can use it.  It makes a memfd_create(
 * MFD_HUGETLB) file of MB megabytes (default huge page size), puts it at
 * descriptor FD without close-on-exec and runs PROGRAM, which is then
 * given the path /proc/self/fd/FD.  Static, for the guest.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd, want;
	off_t mb;

	if (argc < 4) {
		fprintf(stderr, "usage: hugememfd FD MB PROGRAM [ARG...]\n");
		return 2;
	}
	want = atoi(argv[1]);
	mb = atol(argv[2]);
	fd = memfd_create("hugememfd", MFD_HUGETLB);
	if (fd < 0) {
		perror("hugememfd: memfd_create(MFD_HUGETLB)");
		return 1;
	}
	/* Sized here: a program that maps an existing file may not grow it. */
	if (ftruncate(fd, mb << 20)) {
		perror("hugememfd: ftruncate");
		return 1;
	}
	if (fd != want && (dup2(fd, want) < 0 || close(fd))) {
		perror("hugememfd: dup2");
		return 1;
	}
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
