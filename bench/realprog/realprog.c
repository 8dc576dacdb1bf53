// SPDX-License-Identifier: GPL-2.0
/*
 * realprog.c - real, unmodified programs on each backing: Debian's xz
 * compressing a generated corpus, and Debian's memcached -L holding seeded
 * keys that this driver fetches at random (its section below), their large
 * allocations placed by hugepreload.so (bench/realprog/hugepreload.c).
 *
 *   realprog [--backings LIST] [--reps N] [--corpus SIZE] [--seed N]
 *            [--level N] [--preload PATH] [--xz PATH] [--dir DIR]
 *            [--sample-ms N] [--cpu N] [--programs xz,memcached]
 *            [--memcached PATH] [--kv-items N] [--kv-gets N]
 *            [--kv-value BYTES] [--kv-batch N]
 *
 * --programs (default xz) runs each named program's repetitions in turn,
 * xz's first; rows say which in their program column (its first word),
 * and each program's output is checked against its own first run.  What
 * follows is said of xz; memcached's run differs where its section says.
 *
 * Why xz: "xz -9" keeps a 64 MB dictionary, a binary-tree match finder of
 * 512 MB and a 64 MB hash (about 700 MB, allocated at start whatever the
 * input's size, since the input comes on stdin) and walks them at random,
 * a working set hundreds of times the reach of a 4 KB TLB.  (SPEC CPU2017
 * runs xz too, as 557.xz_r; nothing here rests on that: how TLB-sensitive
 * xz is, is what this step's none-against-huge rows measure.)  -T1 keeps
 * it to one thread.
 *
 * The corpus is text-like and seeded (words of a fixed random vocabulary,
 * drawn with Zipf-like frequencies), so every run and every machine
 * compresses the same bytes.  Backings: "off" (no preload: the program as
 * it is), "none" (the preload on 4 KB pages), then the contract's rows
 * that hugepreload serves (the list: realprog/backings.h; the rows:
 * bench/backing.c, whose checks and hugetlbfs mount it shares).
 * Repetitions are interleaved (rep 1 of every backing, then rep 2, ...;
 * each rep starting one backing further), so that drift favours none.
 *
 * Per run: wall time (CLOCK_MONOTONIC around fork .. wait4), user and
 * system time and faults (wait4's rusage), the page sizes the program got
 * (its /proc/PID/smaps sampled every 5 ms at first, then at intervals
 * doubling up to --sample-ms: each sample that finds big mappings resident
 * votes for the page size holding most of them; page_kb is the majority,
 * and a run promised one page size is valid only if every sample saw it;
 * the sizes and shares are from the sample with the most resident), whether
 * hugepreload fell back (its stderr line), and the size and FNV-1a hash of
 * the output, which must be the same on every backing.  The program runs
 * pinned to one CPU (--cpu; default the last this process may use), the
 * driver wherever the scheduler puts it.  A run with another output, the
 * wrong pages or a fallback is still a row, with valid = 0, an @error, and
 * is left out of the medians (plots/render.py).  One "@row realprog" per
 * run, written through bench/rows.h against realprog/table.h's columns
 * (their meaning: results/README.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"
#include "layout.h"
#include "realprog/backings.h"
#include "realprog/table.h"
#include "rows.h"
#include "size.h"

#define MIN_BIG (1UL << 20)	/* a "big" mapping; hugepreload's default */
#define MAX_BACKINGS 16
#define MAX_VOTES 4		/* distinct page sizes a run's samples saw */

static struct {
	char backings[256];
	int reps;
	size_t corpus;
	uint64_t seed;
	int level;
	char preload[PATH_MAX];
	const char *xz;
	const char *dir;
	int sample_ms;
	int cpu;		/* the program's CPU; -1: the last allowed */
	char programs[64];	/* "xz", "memcached" or both, in that order */
	const char *memcached;
	long kv_items, kv_gets;	/* memcached: keys stored, keys fetched */
	int kv_value, kv_batch;	/* value bytes; keys per multi-get */
} opt = { "", 3, 16 << 20, 1, 9, "", "/usr/bin/xz", "/tmp", 200, -1, "xz",
	  "/usr/bin/memcached", 1 << 21, 1 << 22, 100, 100 };

/* the program being measured: "xz" or "memcached" */
static const char *prog = "xz";

/* one run's measurements */
struct run {
	double wall_s, user_s, sys_s;
	long minflt, majflt, maxrss_kb;
	unsigned long big_kb, resident_kb, huge_kb, page_kb;
	/* each sample's vote: page size (kB) and how many samples said it */
	unsigned long vote_kb[MAX_VOTES];
	int vote_n[MAX_VOTES], samples, page_agree;
	int fallback;
	unsigned long long out_bytes;
	uint64_t out_fnv;
	/* the child's stderr up to its next newline (a read ends anywhere) */
	char err_line[1024];
	size_t err_len;
};

static char corpus[PATH_MAX + 64];	/* the corpus file, while it exists */
static char sock_path[PATH_MAX + 64];	/* memcached's socket, while it runs */

/* -- the corpus ----------------------------------------------------------- */

#define VOCAB 16384

/*
 * Words of 2..11 letters from a seeded vocabulary; word i is drawn with
 * weight about 1/(i+1) (Zipf), sentences of 4..19 words, a line each.
 * Compressible like prose (xz -9 gets about 3.5:1), not trivially.
 */
static int write_corpus(const char *path, char *why, size_t n)
{
	static char words[VOCAB][12];
	static double cum[VOCAB];
	uint64_t s = opt.seed;
	double total = 0;
	size_t i, len, done = 0;
	char *buf = malloc(opt.corpus + 64);
	FILE *f;

	for (i = 0; i < VOCAB; i++) {
		len = 2 + mix64(++s) % 10;
		for (size_t k = 0; k < len; k++)
			words[i][k] = 'a' + mix64(++s) % 26;
		total += 1.0 / (i + 1);
		cum[i] = total;
	}
	while (buf && done < opt.corpus) {
		int nw = 4 + mix64(++s) % 16;

		for (int w = 0; w < nw && done < opt.corpus; w++) {
			double u = (mix64(++s) >> 11) * 0x1p-53 * total;
			size_t lo = 0, hi = VOCAB - 1;

			while (lo < hi) {	/* first cum[] >= u */
				size_t mid = (lo + hi) / 2;

				if (cum[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			done += sprintf(buf + done, "%s%s", w ? " " : "",
					words[lo]);
		}
		done += sprintf(buf + done, ".\n");
	}
	f = buf ? fopen(path, "w") : NULL;
	if (!f || fwrite(buf, 1, opt.corpus, f) != opt.corpus || fclose(f)) {
		snprintf(why, n, "cannot write the corpus %.200s: %s", path,
			 strerror(errno));
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

/* -- backings -------------------------------------------------------------- */

static void remove_corpus(void)
{
	if (corpus[0])
		unlink(corpus);
	corpus[0] = 0;
	if (sock_path[0])
		unlink(sock_path);
	sock_path[0] = 0;
}

/* a signal that ends us takes the corpus and a hugetlbfs mount with it */
static void cleanup_signal(int sig)
{
	remove_corpus();
	backing_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * 0 if backing b can run here, else -1 and why (a skip): off and none
 * need nothing, the others are the contract's rows (bench/backing.c),
 * whose check also mounts a hugetlbfs for the hugetlbfs row if none is
 */
static int available(const char *b, char *why, size_t n)
{
	if (!strcmp(b, "off") || !strcmp(b, "none"))
		return 0;
	return backing_available(backing_find(b), why, n);
}

/*
 * What became of each backing, printed once at the end as "@meta
 * realprog_backings" (meta.json other.realprog_backings): apart from the
 * benchmarks' "@meta backing", whose verified page size a thp run that got
 * few huge pages must not overwrite.
 */
static struct outcome {
	const char *name, *status;
	char reason[256];
	unsigned long page_kb;
	int excluded;		/* runs left out of the medians */
} outcomes[MAX_BACKINGS];
static int noutcomes;

static void record(const char *b, const char *status, const char *why,
		   unsigned long page_kb)
{
	struct outcome *o = outcomes;

	while (o < outcomes + noutcomes && strcmp(o->name, b))
		o++;
	if (o == outcomes + noutcomes)
		noutcomes++;
	else if (!strcmp(o->status, "failed")) {
		o->excluded += !strcmp(status, "failed");
		return;		/* a failure in any repetition stays */
	}
	o->name = b;
	o->excluded += !strcmp(status, "failed");
	o->status = status;
	snprintf(o->reason, sizeof(o->reason), "%s", why);
	o->page_kb = page_kb;
}

static void emit_outcomes(void)
{
	int i;

	printf("@meta realprog_backings {");
	for (i = 0; i < noutcomes; i++)
		printf("%s\"%s\": {\"status\": \"%s\", \"reason\": \"%s\", "
		       "\"page_kb\": %lu, \"excluded\": %d}", i ? ", " : "",
		       outcomes[i].name, outcomes[i].status,
		       outcomes[i].reason, outcomes[i].page_kb,
		       outcomes[i].excluded);
	printf("}\n");
}

/* -- one run --------------------------------------------------------------- */

/* one sample's page size; page_kb is the size most samples said */
static void vote(struct run *r, unsigned long kb)
{
	int i;

	for (i = 0; i < MAX_VOTES && r->vote_n[i] && r->vote_kb[i] != kb; i++)
		;
	if (i == MAX_VOTES)	/* a fifth size: counts against agreement */
		i = MAX_VOTES - 1, kb = 0;
	r->vote_kb[i] = kb;
	r->vote_n[i]++;
	r->samples++;
	if (r->vote_n[i] > r->page_agree) {
		r->page_agree = r->vote_n[i];
		r->page_kb = kb;
	}
}

/* big private writable mappings of pid: sizes, resident, in huge pages */
static void sample(pid_t pid, struct run *r)
{
	char path[64], line[512], perms[8];
	unsigned long s, e, v, big = 0, res = 0, huge = 0, kps = 4, hkps = 0;
	int in = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = e - s >= MIN_BIG && !strcmp(perms, "rw-p");
			big += in ? (e - s) >> 10 : 0;
		} else if (!in) {
			continue;
		} else if (sscanf(line, "KernelPageSize: %lu", &v) == 1) {
			kps = v;
		} else if (sscanf(line, "Rss: %lu", &v) == 1) {
			res += v;
		} else if (sscanf(line, "AnonHugePages: %lu", &v) == 1) {
			huge += v;
		} else if (sscanf(line, "Private_Hugetlb: %lu", &v) == 1) {
			/* hugetlb pages are not in Rss */
			res += v;
			huge += v;
			hkps = v && kps > hkps ? kps : hkps;
		}
	}
	if (f)
		fclose(f);
	if (!res)
		return;
	/* the page size that holds most of what it touched */
	vote(r, 2 * huge < res ? 4 : hkps ? hkps : 2048);
	if (res < r->resident_kb)
		return;
	r->big_kb = big;
	r->resident_kb = res;
	r->huge_kb = huge;
}

static uint64_t fnv(uint64_t h, const unsigned char *p, ssize_t n)
{
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/*
 * Echoes the child's stderr a whole line at a time and notes hugepreload's
 * fallback message, which a read may have cut anywhere (a line longer than
 * the buffer goes out in pieces).
 */
static void err_lines(struct run *r, const unsigned char *p, ssize_t n)
{
	while (n-- > 0) {
		char c = (char)*p++;
		int full = r->err_len == sizeof(r->err_line) - 1;

		if (c != '\n' && !full) {
			r->err_line[r->err_len++] = c;
			continue;
		}
		r->err_line[r->err_len] = 0;
		r->fallback |= !!strstr(r->err_line, "hugepreload:");
		progress("%s stderr: %s", prog, r->err_line);
		r->err_len = 0;
		if (c != '\n')
			r->err_line[r->err_len++] = c;
	}
}

/* reads the child's stdout (counted, hashed) and stderr (echoed) */
static void drain(int out, int err, struct run *r, int *open_fds, int ms)
{
	unsigned char buf[65536];
	struct pollfd pf[2] = { { out, POLLIN, 0 }, { err, POLLIN, 0 } };
	ssize_t n;

	if (poll(pf, 2, ms) <= 0)
		return;
	n = pf[0].revents ? read(out, buf, sizeof(buf)) : -1;
	if (n > 0) {
		r->out_bytes += n;
		r->out_fnv = fnv(r->out_fnv, buf, n);
	} else if (pf[0].revents) {	/* end of file */
		*open_fds &= ~1;
	}
	n = pf[1].revents ? read(err, buf, sizeof(buf)) : -1;
	if (n > 0)
		err_lines(r, buf, n);
	else if (pf[1].revents) {
		*open_fds &= ~2;
		if (r->err_len)		/* a last line without a newline */
			err_lines(r, (const unsigned char *)"\n", 1);
	}
}

static void child(const char *b, const char *corpus, int out[2], int err[2])
{
	char level[8];
	int in = open(corpus, O_RDONLY);
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(opt.cpu, &one);
	if (in < 0 || dup2(in, 0) < 0 || dup2(out[1], 1) < 0 ||
	    dup2(err[1], 2) < 0 || sched_setaffinity(0, sizeof(one), &one))
		_exit(126);
	close(out[0]);
	close(err[0]);
	if (strcmp(b, "off")) {
		setenv("LD_PRELOAD", opt.preload, 1);
		setenv("HUGEPRELOAD_BACKING", b, 1);
	}
	snprintf(level, sizeof(level), "-%d", opt.level);
	execl(opt.xz, opt.xz, level, "-T1", "-c", (char *)NULL);
	_exit(127);
}

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) * 1e-6;
}

/* the program's CPU times, faults and peak RSS (wait4's rusage) */
static void from_rusage(struct run *r, const struct rusage *ru)
{
	r->user_s = ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6;
	r->sys_s = ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
	r->minflt = ru->ru_minflt;
	r->majflt = ru->ru_majflt;
	r->maxrss_kb = ru->ru_maxrss;
}

static int run_memcached(const char *b, struct run *r);

static int run_once(const char *b, const char *corpus, struct run *r)
{
	int out[2], err[2], st = 0, fds = 3, every = 5;
	struct timespec t0, t1, t_sample = { 0, 0 };
	struct rusage ru;
	pid_t pid;

	if (!strcmp(prog, "memcached"))
		return run_memcached(b, r);
	memset(r, 0, sizeof(*r));
	r->out_fnv = 0xcbf29ce484222325ULL;
	if (pipe(out) || pipe(err))
		return -1;
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		child(b, corpus, out, err);
	close(out[1]);
	close(err[1]);
	/* every 5 ms at first, then less often, to catch short runs */
	while (fds) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (ms_between(&t_sample, &t1) >= every) {
			sample(pid, r);
			t_sample = t1;
			every = every * 2 < opt.sample_ms ? every * 2 :
				opt.sample_ms;
		}
		drain(out[0], err[0], r, &fds, every);
	}
	wait4(pid, &st, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(out[0]);
	close(err[0]);
	r->wall_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	from_rusage(r, &ru);
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* -- memcached: a key-value store, this driver its client ----------------- */

/*
 * memcached -L (its man page: "Increasing the memory page size could
 * reduce the number of TLB misses and improve the performance. In order to
 * get large pages from the OS, memcached will allocate the total
 * item-cache in one large chunk"): the item cache is one posix_memalign of
 * -m MB, which hugepreload serves, as it does the hash table (calloc).
 * memcached's own madvise(MADV_HUGEPAGE) on the cache is then the
 * backing's to decide (hugepreload ignores page-size advice on what it
 * placed); without the preload ("off") the program as it is gets THP
 * where the kernel gives it.  One worker thread (-t 1), a unix socket.
 * Measured here (results/README.md, realprog.csv): on this suite's first
 * native run every 2 MB backing took 16-18 % off memcached's user + sys
 * time against none's 4 kB pages, as the man page says it should.
 *
 * The workload, seeded: --kv-items keys ("k" and 10 digits) set to values
 * of --kv-value lowercase letters (from a keyed mix64 of the key, so the
 * same on every run), then --kv-gets keys fetched at random in multi-gets
 * of --kv-batch keys: each key a hash-bucket read and an item read in
 * memory hundreds of MB wide.  The output is every byte memcached
 * answered (STORED lines, VALUE lines and data, END), counted and hashed:
 * a missed key (eviction), a wrong value or a refused command changes it.
 * -m holds every item with room to spare and the hash table has a bucket
 * per key, so nothing is evicted and memcached never grows its table in
 * the middle of a run.
 */
#define KV_KEY "k%010ld"

/* memcached -m: 100-byte values sit in 192-byte chunks; 256 B a key to spare */
static long kv_mb(void)
{
	return ((opt.kv_items * (long)(opt.kv_value + 156)) >> 20) + 64;
}

/* 2^hashpower buckets >= keys: memcached grows its table past 1.5 a bucket */
static int kv_hashpower(void)
{
	int hp = 16;

	while ((1L << hp) < opt.kv_items)
		hp++;
	return hp;
}

static void child_memcached(const char *b, int err[2])
{
	char mb[24], hp[32];
	int in = open("/dev/null", O_RDONLY);
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(opt.cpu, &one);
	if (in < 0 || dup2(in, 0) < 0 || dup2(err[1], 1) < 0 ||
	    dup2(err[1], 2) < 0 || sched_setaffinity(0, sizeof(one), &one))
		_exit(126);
	close(err[0]);
	if (strcmp(b, "off")) {
		setenv("LD_PRELOAD", opt.preload, 1);
		setenv("HUGEPRELOAD_BACKING", b, 1);
	}
	snprintf(mb, sizeof(mb), "%ld", kv_mb());
	snprintf(hp, sizeof(hp), "hashpower=%d", kv_hashpower());
	/* as root memcached wants a user to run as: root (the guest's only) */
	execl(opt.memcached, opt.memcached, "-L", "-m", mb, "-t", "1", "-s",
	      sock_path, "-a", "0600", "-o", hp,
	      geteuid() ? (char *)NULL : "-u", "root", (char *)NULL);
	_exit(127);
}

/* the client's state: commands generated and answered */
struct kv {
	long sets, gets;	/* generated: keys set, keys fetched */
	long sent, answered;	/* commands written whole; STORED/END seen */
	uint64_t s;		/* the key stream */
	char buf[1 << 16];
	size_t len, off;	/* buf[off, len) still to write */
	char head[8];		/* the start of the answer's current line */
	int hn, bad;
};

/* the value of key k: kv_value letters, the same on every run */
static int kv_value(long k, char *out)
{
	uint64_t x = 0, key = opt.seed * 0x9e3779b97f4a7c15ULL + k * 64;
	int i;

	for (i = 0; i < opt.kv_value; i++) {
		if (i % 12 == 0)
			x = mix64(key + i);
		out[i] = 'a' + x % 26;
		x /= 26;
	}
	return opt.kv_value;
}

/* the next commands into buf, whole ones: sets, then multi-gets */
static void kv_fill(struct kv *k)
{
	k->len = k->off = 0;
	while (k->sets < opt.kv_items &&
	       k->len + opt.kv_value + 64 < sizeof(k->buf)) {
		k->len += sprintf(k->buf + k->len, "set " KV_KEY " 0 0 %d\r\n",
				  k->sets, opt.kv_value);
		k->len += kv_value(k->sets++, k->buf + k->len);
		k->len += sprintf(k->buf + k->len, "\r\n");
		k->sent++;
	}
	while (k->sets == opt.kv_items && k->gets < opt.kv_gets &&
	       k->len + 16 * (size_t)opt.kv_batch + 8 < sizeof(k->buf)) {
		int n;

		k->len += sprintf(k->buf + k->len, "get");
		for (n = 0; n < opt.kv_batch && k->gets < opt.kv_gets; n++) {
			long key = mix64(++k->s) % opt.kv_items;

			k->len += sprintf(k->buf + k->len, " " KV_KEY, key);
			k->gets++;
		}
		k->len += sprintf(k->buf + k->len, "\r\n");
		k->sent++;
	}
}

/*
 * Counts the answers: a line "STORED" or "END" closes a command (values
 * are lowercase letters, keys "k" and digits, so neither can be one);
 * ERROR, CLIENT_ERROR, SERVER_ERROR or NOT_STORED is a failed run.
 */
static void kv_answer(struct kv *k, struct run *r, const char *p, ssize_t n)
{
	r->out_bytes += n;
	r->out_fnv = fnv(r->out_fnv, (const unsigned char *)p, n);
	while (n-- > 0) {
		char c = *p++;

		if (c != '\n') {
			if (k->hn < (int)sizeof(k->head) - 1)
				k->head[k->hn++] = c;
			continue;
		}
		k->head[k->hn] = 0;
		if (!strcmp(k->head, "STORED\r") || !strcmp(k->head, "END\r"))
			k->answered++;
		else if (!strncmp(k->head, "ERROR", 5) ||
			 !strncmp(k->head, "CLIENT_", 7) ||
			 !strncmp(k->head, "SERVER_", 7) ||
			 !strncmp(k->head, "NOT_", 4))
			k->bad = 1;
		k->hn = 0;
	}
}

/* reads memcached's stderr (echoed), its output pipe */
static void drain_err(int err, struct run *r, int *open_fds)
{
	unsigned char buf[4096];
	ssize_t n = read(err, buf, sizeof(buf));

	if (n > 0) {
		err_lines(r, buf, n);
	} else if (n == 0 || errno != EAGAIN) {
		*open_fds &= ~2;
		if (r->err_len)
			err_lines(r, (const unsigned char *)"\n", 1);
	}
}

static int run_memcached(const char *b, struct run *r)
{
	int err[2], st = 0, fds = 2, every = 5, fd = -1, failed = 0;
	struct timespec t0, t1, t_sample = { 0, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static struct kv k;
	struct rusage ru;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	memset(&k, 0, sizeof(k));
	k.s = opt.seed;
	r->out_fnv = 0xcbf29ce484222325ULL;
	snprintf(sock_path, sizeof(sock_path), "%s/realprog-memcached-%d",
		 opt.dir, (int)getpid());
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		emit_error("memcached: socket path %s too long: give a "
			   "shorter --dir", sock_path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	unlink(sock_path);
	if (pipe(err))
		return -1;
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		child_memcached(b, err);
	close(err[1]);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	while (!failed) {
		struct pollfd pf[2] = { { fd, 0, 0 }, { err[0], POLLIN, 0 } };
		char in[65536];
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		/*
		 * from when it listens: its start (the heap, the first
		 * slab pages being touched) is not the run the pages serve
		 */
		if (fd >= 0 && ms_between(&t_sample, &t1) >= every) {
			sample(pid, r);
			t_sample = t1;
			every = every * 2 < opt.sample_ms ? every * 2 :
				opt.sample_ms;
		}
		if (fd < 0) {	/* until memcached listens (TCG: seconds) */
			fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (fd >= 0 && connect(fd, (struct sockaddr *)&sa,
					       sizeof(sa))) {
				close(fd);
				fd = -1;
			}
			if (fd < 0 && (waitpid(pid, &st, WNOHANG) == pid ||
				       ms_between(&t0, &t1) > 600e3)) {
				emit_error("memcached: never listened on %s",
					   sock_path);
				failed = 1;
				break;
			}
			if (fd < 0) {
				if (fds & 2)
					poll(pf + 1, 1, 2);
				else
					usleep(2000);
				if (pf[1].revents)
					drain_err(err[0], r, &fds);
				continue;
			}
			pf[0].fd = fd;
		}
		if (k.off == k.len)
			kv_fill(&k);
		if (k.off == k.len && k.answered == k.sent)
			break;	/* every command written and answered */
		pf[0].events = POLLIN | (k.off < k.len ? POLLOUT : 0);
		if (poll(pf, fds & 2 ? 2 : 1, every) < 0 && errno != EINTR)
			failed = 1;
		if (pf[0].revents & POLLOUT) {
			n = write(fd, k.buf + k.off, k.len - k.off);
			if (n > 0)
				k.off += n;
			else if (n < 0 && errno != EAGAIN)
				failed = 1;
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(fd, in, sizeof(in));
			if (n > 0)
				kv_answer(&k, r, in, n);
			else if (!n || errno != EAGAIN)
				failed = 1;	/* memcached went away */
		}
		if (pf[1].revents)
			drain_err(err[0], r, &fds);
		if (k.bad) {
			emit_error("memcached refused a command (ERROR, "
				   "NOT_STORED, ...): the cache too small?");
			failed = 1;
		}
	}
	if (fd >= 0)
		close(fd);
	kill(pid, SIGTERM);	/* memcached exits 0 on it */
	while (fds & 2) {
		struct pollfd pe = { err[0], POLLIN, 0 };

		if (poll(&pe, 1, 1000) > 0)
			drain_err(err[0], r, &fds);
	}
	wait4(pid, &st, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(err[0]);
	unlink(sock_path);
	sock_path[0] = 0;
	r->wall_s = ms_between(&t0, &t1) * 1e-3;
	from_rusage(r, &ru);
	return !failed && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* -- the loop and the protocol --------------------------------------------- */

/* one row, in the order of realprog/table.h's columns */
static void emit(const char *b, int rep, const struct run *r, int valid)
{
	double huge_pct =
		r->resident_kb ? 100.0 * r->huge_kb / r->resident_kb : 0.0;
	char fnv[17], program[64];
	/* memcached: the values it holds */
	unsigned long long data = strcmp(prog, "memcached") ? opt.corpus :
		(unsigned long long)opt.kv_items * opt.kv_value;
	const struct cell row[] = {
		CELL_S(b), CELL_D(rep), CELL_U(r->page_kb), CELL_F(huge_pct),
		CELL_F(r->wall_s), CELL_F(r->user_s), CELL_F(r->sys_s),
		CELL_D(r->minflt), CELL_D(r->majflt), CELL_D(r->maxrss_kb),
		CELL_U(r->big_kb), CELL_U(r->resident_kb), CELL_U(r->huge_kb),
		CELL_D(r->fallback), CELL_U(r->out_bytes), CELL_S(fnv),
		CELL_U(data), CELL_S(program), CELL_D(opt.cpu),
		CELL_D(r->samples), CELL_D(r->page_agree), CELL_D(valid),
	};

	snprintf(fnv, sizeof(fnv), "%016llx", (unsigned long long)r->out_fnv);
	if (strcmp(prog, "memcached"))
		snprintf(program, sizeof(program), "xz -%d -T1", opt.level);
	else
		snprintf(program, sizeof(program), "memcached -L -m %ld -t 1",
			 kv_mb());
	emit_row(row, NCELLS(row));
}

/* " off none thp ...": realprog_backings, for messages */
static void print_backings(void)
{
	size_t i;

	for (i = 0; i < NREALPROG_BACKINGS; i++)
		fprintf(stderr, " %s", realprog_backings[i]);
}

/* exits unless every backing but off and none is a row of the table */
static void check_backings(void)
{
	size_t i;

	for (i = 2; i < NREALPROG_BACKINGS; i++)
		if (!backing_find(realprog_backings[i])) {
			fprintf(stderr, "realprog: %s is no row of the backing "
				"table (bench/backing.c): add it there or take "
				"it out of bench/realprog/backings.h\n",
				realprog_backings[i]);
			exit(70);
		}
}

/* the backings that can run, in the order of realprog_backings */
static int pick(const char *list[])
{
	char why[256], copy[sizeof(opt.backings) + 2], needle[32], *tok, *save;
	int n = 0;
	size_t i;

	snprintf(copy, sizeof(copy), "%s", opt.backings);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NREALPROG_BACKINGS; i++)
			if (!strcmp(tok, realprog_backings[i]))
				break;
		if (i == NREALPROG_BACKINGS) {
			fprintf(stderr, "realprog: unknown backing '%s': use "
				"one of", tok);
			print_backings();
			fprintf(stderr, "\n");
			exit(2);
		}
	}
	for (i = 0; i < NREALPROG_BACKINGS; i++) {
		const char *b = realprog_backings[i];

		snprintf(copy, sizeof(copy), ",%s,", opt.backings);
		snprintf(needle, sizeof(needle), ",%s,", b);
		if (opt.backings[0] && !strstr(copy, needle))
			continue;
		if (available(b, why, sizeof(why))) {
			record(b, "skipped", why, 0);
			continue;
		}
		list[n++] = b;
	}
	return n;
}

/*
 * A backing whose pages were not what it promises fails, saying why;
 * except thp, whose rows record what the kernel gave (page_kb, huge_pct).
 */
static int verify(const char *b, const struct run *r, char *why, size_t n)
{
	const struct backing *row = backing_find(b);
	/* memcached -L advises THP itself: its off is advice as thp is */
	int advice = !strcmp(b, "thp") ||
		     (!strcmp(b, "off") && !strcmp(prog, "memcached"));
	unsigned long want = row ? row->page_kb : advice ? 2048 : 4;

	if (r->fallback)
		snprintf(why, n, "hugepreload fell back to normal pages "
			 "(pool too small?)");
	else if (!r->page_kb)
		snprintf(why, n, "no smaps sample caught its big mappings "
			 "resident: the run was too short");
	else if (r->page_kb != want)
		snprintf(why, n, "promised %lu kB pages, smaps showed most of "
			 "its big mappings on %lu kB", want, r->page_kb);
	else if (r->page_agree < r->samples)
		snprintf(why, n, "promised %lu kB pages, %d of %d smaps samples "
			 "showed most of its big mappings on other pages", want,
			 r->samples - r->page_agree, r->samples);
	else
		return 0;
	/* THP is advice, not a promise: the row says what it got */
	if (advice && r->page_kb) {
		progress("%s %s: %s", prog, b, why);
		return 0;
	}
	return -1;
}

/* every repetition of every backing of the program prog */
static int measure_program(const char *list[], int nb, const char *corpus)
{
	int rc = 0, rep, i, bad;
	struct run r, first = { 0 };
	char why[256] = "";

	for (rep = 0; rep < opt.reps; rep++) {
		for (i = 0; i < nb; i++) {
			const char *b = list[(i + rep) % nb];

			progress("%s rep %d", b, rep + 1);
			if (run_once(b, corpus, &r)) {
				snprintf(why, sizeof(why), "%s failed", prog);
				record(b, "failed", why, 0);
				emit_error("%s: %s exited with an error", b,
					   prog);
				rc = 2;
				continue;
			}
			if (!first.out_bytes)
				first = r;
			if (r.out_bytes != first.out_bytes ||
			    r.out_fnv != first.out_fnv)
				snprintf(why, sizeof(why), "%s wrote other "
					 "bytes than on %s", prog, list[0]);
			bad = r.out_fnv != first.out_fnv ||
			      verify(b, &r, why, sizeof(why));
			if (bad) {
				emit_error("%s: %s", b, why);
				rc = 2;
			}
			emit(b, rep + 1, &r, !bad);
			record(b, bad ? "failed" : "measured", bad ? why : "",
			       r.page_kb);
		}
	}
	return rc;
}

/*
 * 0 if this kernel has unix sockets, which memcached listens on; else -1
 * and why (the project's guest kernel, tinyconfig-based, may have no
 * CONFIG_NET): memcached is then skipped, said in "@meta realprog_skipped"
 */
static int no_sockets(char *why, size_t n)
{
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	if (s >= 0) {
		close(s);
		return 0;
	}
	snprintf(why, n, "memcached not run: this kernel has no unix sockets "
		 "(socket: %s), which it listens on (CONFIG_NET, CONFIG_UNIX)",
		 strerror(errno));
	return -1;
}

/* each program of --programs in turn, xz first */
static int measure(const char *list[], int nb, const char *corpus)
{
	static const char *const names[] = { "xz", "memcached" };
	char copy[sizeof(opt.programs) + 2], why[256];
	int rc = 0;
	size_t i;

	snprintf(copy, sizeof(copy), ",%s,", opt.programs);
	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char needle[16];

		snprintf(needle, sizeof(needle), ",%s,", names[i]);
		if (!strstr(copy, needle))
			continue;
		if (!strcmp(names[i], "memcached") &&
		    no_sockets(why, sizeof(why))) {
			printf("@meta realprog_skipped {\"memcached\": "
			       "\"%s\"}\n", why);
			progress("%s", why);
			continue;
		}
		prog = names[i];
		if (measure_program(list, nb, corpus))
			rc = 2;
	}
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: realprog [--backings LIST] [--reps N] "
		"[--corpus SIZE] [--seed N] [--level 0-9] [--preload PATH] "
		"[--xz PATH] [--dir DIR] [--sample-ms N] [--cpu N]\n"
		"        [--programs xz,memcached] [--memcached PATH] "
		"[--kv-items N] [--kv-gets N] [--kv-value BYTES] "
		"[--kv-batch N]\n"
		"  backings (default: all that this kernel has):");
	print_backings();
	fprintf(stderr, "\n");
	exit(2);
}

/* a --corpus size (size.h's rule) of at least 4096 bytes; exits if none */
static size_t parse_size(const char *s)
{
	unsigned long long v;

	if (size_parse(s, &v) || v < 4096) {
		fprintf(stderr, "realprog: bad size '%s': give at least 4096 "
			"bytes, optionally with K, M or G\n", s);
		exit(2);
	}
	return v;
}

/* --cpu, or the last CPU this process may run on; exits if not allowed */
static void pick_cpu(void)
{
	cpu_set_t set;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("realprog: sched_getaffinity");
		exit(2);
	}
	for (c = CPU_SETSIZE - 1; opt.cpu < 0 && c >= 0; c--)
		if (CPU_ISSET(c, &set))
			opt.cpu = c;
	if (opt.cpu < 0 || opt.cpu >= CPU_SETSIZE || !CPU_ISSET(opt.cpu, &set)) {
		fprintf(stderr, "realprog: --cpu %d is not a CPU this process "
			"may run on: give one from taskset -p %d\n", opt.cpu,
			(int)getpid());
		exit(2);
	}
}

/* the preload next to this binary, or in /usr/local/lib (the guest) */
static void default_preload(void)
{
	char self[PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n > 0) {
		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(opt.preload, sizeof(opt.preload),
				 "%s/hugepreload.so", self);
			if (!access(opt.preload, R_OK))
				return;
		}
	}
	snprintf(opt.preload, sizeof(opt.preload),
		 "/usr/local/lib/hugepreload.so");
}

/* exits unless --programs is a list of xz and memcached */
static void check_programs(void)
{
	char copy[sizeof(opt.programs)], *tok, *save;

	snprintf(copy, sizeof(copy), "%s", opt.programs);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, "xz") && strcmp(tok, "memcached")) {
			fprintf(stderr, "realprog: unknown program '%s': "
				"--programs takes xz, memcached or both\n",
				tok);
			exit(2);
		}
	if (!strtok_r(strcpy(copy, opt.programs), ",", &save)) {
		fprintf(stderr, "realprog: --programs names no program\n");
		exit(2);
	}
}

static void parse(int argc, char **argv)
{
	int i;

	default_preload();
	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		i++;
		if (!strcmp(o, "--backings"))
			snprintf(opt.backings, sizeof(opt.backings), "%s", v);
		else if (!strcmp(o, "--reps"))
			opt.reps = atoi(v);
		else if (!strcmp(o, "--corpus"))
			opt.corpus = parse_size(v);
		else if (!strcmp(o, "--seed"))
			opt.seed = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--level"))
			opt.level = atoi(v);
		else if (!strcmp(o, "--preload"))
			snprintf(opt.preload, sizeof(opt.preload), "%s", v);
		else if (!strcmp(o, "--xz"))
			opt.xz = v;
		else if (!strcmp(o, "--dir"))
			opt.dir = v;
		else if (!strcmp(o, "--sample-ms"))
			opt.sample_ms = atoi(v);
		else if (!strcmp(o, "--cpu"))
			opt.cpu = atoi(v);
		else if (!strcmp(o, "--programs"))
			snprintf(opt.programs, sizeof(opt.programs), "%s", v);
		else if (!strcmp(o, "--memcached"))
			opt.memcached = v;
		else if (!strcmp(o, "--kv-items"))
			opt.kv_items = atol(v);
		else if (!strcmp(o, "--kv-gets"))
			opt.kv_gets = atol(v);
		else if (!strcmp(o, "--kv-value"))
			opt.kv_value = atoi(v);
		else if (!strcmp(o, "--kv-batch"))
			opt.kv_batch = atoi(v);
		else
			usage();
	}
	if (opt.reps < 1 || opt.level < 0 || opt.level > 9 ||
	    opt.sample_ms < 1 || opt.kv_items < 1 || opt.kv_gets < 0 ||
	    opt.kv_items > 9999999999L || opt.kv_value < 1 ||
	    opt.kv_value > 4096 || opt.kv_batch < 1 || opt.kv_batch > 1000)
		usage();
	check_programs();
	pick_cpu();
	/* Debian's, by path: the guest's PATH finds busybox's xz first */
	if (strstr(opt.programs, "memcached") && access(opt.memcached, X_OK)) {
		fprintf(stderr, "realprog: no memcached at %s: install "
			"memcached (make deps) or give --memcached\n",
			opt.memcached);
		exit(2);
	}
	if (strstr(opt.programs, "xz") && access(opt.xz, X_OK)) {
		fprintf(stderr, "realprog: no xz at %s: install xz-utils "
			"(make deps) or give --xz\n", opt.xz);
		exit(2);
	}
	if (access(opt.preload, R_OK)) {
		fprintf(stderr, "realprog: no preload library at %s: build it "
			"(make build/bench/hugepreload.so) or give --preload\n",
			opt.preload);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *list[MAX_BACKINGS];
	char why[PATH_MAX + 64];
	int nb, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rows_begin(&realprog_table, why, sizeof(why))) {
		fprintf(stderr, "realprog: %s\n", why);
		return 70;
	}
	check_backings();
	parse(argc, argv);
	emit_header();
	printf("@meta realprog {\"program\": \"xz -%d -T1 -c (stdin: the "
	       "corpus)\", \"corpus_bytes\": %zu, \"seed\": %llu, \"reps\": "
	       "%d, \"sample_ms\": %d, \"preload\": \"%s\", \"cpu\": %d, "
	       "\"programs\": \"%s\", \"memcached\": \"memcached -L -m %ld "
	       "-t 1 -o hashpower=%d (unix socket; the driver its client)\", "
	       "\"kv_items\": %ld, \"kv_gets\": %ld, \"kv_value\": %d, "
	       "\"kv_batch\": %d}\n",
	       opt.level, opt.corpus, (unsigned long long)opt.seed, opt.reps,
	       opt.sample_ms, opt.preload, opt.cpu, opt.programs, kv_mb(),
	       kv_hashpower(), opt.kv_items, opt.kv_gets, opt.kv_value,
	       opt.kv_batch);
	nb = pick(list);
	/* after pick: a hugetlbfs mount made there set handlers of its own */
	signal(SIGINT, cleanup_signal);
	signal(SIGTERM, cleanup_signal);
	signal(SIGHUP, cleanup_signal);
	snprintf(corpus, sizeof(corpus), "%s/realprog-corpus-%d", opt.dir,
		 (int)getpid());
	/* also when a row that does not fit its columns ends us (exit 70) */
	atexit(remove_corpus);
	if (write_corpus(corpus, why, sizeof(why))) {
		emit_error("%s", why);
		emit_done(2);
		return 2;
	}
	rc = measure(list, nb, corpus);
	emit_outcomes();
	remove_corpus();
	backing_cleanup();
	emit_done(rc);
	return rc;
}
