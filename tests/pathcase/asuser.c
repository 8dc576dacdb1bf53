// SPDX-License-Identifier: GPL-2.0
/*
 * asuser UID GID PROGRAM [ARG...]: run PROGRAM as UID:GID with no
 * supplementary groups.  The guest's init is root; the path-client test
 * (tests/pathcase/run.py) runs every client through this so that what it
 * shows is what an unprivileged user gets.  Static: the guest has no libc.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;
	gid_t gid;

	if (argc < 4) {
		fprintf(stderr, "usage: asuser UID GID PROGRAM [ARG...]\n");
		return 2;
	}
	uid = strtoul(argv[1], NULL, 10);
	gid = strtoul(argv[2], NULL, 10);
	/* Groups first: once the uid is dropped they cannot be changed. */
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		perror("asuser: dropping privileges");
		return 126;
	}
	if (getuid() != uid || geteuid() != uid || getegid() != gid) {
		fprintf(stderr, "asuser: still not %u:%u\n", uid, gid);
		return 126;
	}
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
