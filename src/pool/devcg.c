/* SPDX-License-Identifier: Apache-2.0 */
/*
 * devcg.c - the pure half of device limiting (devcg.h): parsers of the
 * driver's /proc files, a job's rules, the hand-assembled BPF program and
 * the v1 deny lines.
 */
#include "pool/devcg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next line of text: its start and length; NULL at the end. */
static const char *next_line(const char **cur, size_t *len)
{
	const char *s = *cur;
	if (!*s)
		return NULL;
	const char *e = strchr(s, '\n');
	*len = e ? (size_t)(e - s) : strlen(s);
	*cur = e ? e + 1 : s + *len;
	return s;
}

/* A decimal number of at most 9 digits in [s, s+len), surrounding blanks allowed. */
static int parse_uint(const char *s, size_t len, unsigned *out)
{
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t start = i;
	unsigned v = 0;
	while (i < len && isdigit((unsigned char)s[i]) && i - start < 9)
		v = v * 10 + (unsigned)(s[i++] - '0');
	if (i == start)
		return -1;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (i != len)
		return -1;
	*out = v;
	return 0;
}

int devcg_parse_minor(const char *text, unsigned *minor)
{
	static const char key[] = "Device Minor:";
	const char *cur = text, *l;
	size_t len;
	while ((l = next_line(&cur, &len))) {
		if (len < sizeof(key) - 1 || memcmp(l, key, sizeof(key) - 1) != 0)
			continue;
		unsigned v;
		if (parse_uint(l + sizeof(key) - 1, len - (sizeof(key) - 1), &v) || v >= DEVCG_MODESET_MINOR)
			return -1;
		*minor = v;
		return 0;
	}
	return -1;
}

int devcg_parse_major(const char *text, const char *name, unsigned *major)
{
	const char *cur = text, *l;
	size_t len, nlen = strlen(name);
	bool in_char = false;
	while ((l = next_line(&cur, &len))) {
		if (len >= 18 && memcmp(l, "Character devices:", 18) == 0) {
			in_char = true;
			continue;
		}
		if (len >= 14 && memcmp(l, "Block devices:", 14) == 0) {
			in_char = false;
			continue;
		}
		/* "%3d %s" */
		if (!in_char || len <= nlen + 1 || memcmp(l + len - nlen, name, nlen) != 0 || l[len - nlen - 1] != ' ')
			continue;
		unsigned v;
		if (parse_uint(l, len - nlen - 1, &v) == 0 && v < 4096) {
			*major = v;
			return 1;
		}
	}
	return 0;
}

int devcg_proc_bus_id(const char *nvml, char *out, size_t outlen)
{
	unsigned dom, bus, dev, fn;
	char tail;
	if (!nvml || sscanf(nvml, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || dom > 0xffff || bus > 0xff ||
	    dev > 0x1f || fn > 7)
		return -1;
	/* only hex digits and the separators, as sscanf also takes "+1" and " 1" */
	for (const char *c = nvml; *c; c++)
		if (!isxdigit((unsigned char)*c) && *c != ':' && *c != '.')
			return -1;
	if ((size_t)snprintf(out, outlen, "%04x:%02x:%02x.%x", dom, bus, dev, fn) >= outlen)
		return -1;
	return 0;
}

int devcg_parse_mig_minors(const char *text, struct devcg_cap *out, int max)
{
	const char *cur = text, *l;
	size_t len;
	int n = 0;
	while ((l = next_line(&cur, &len))) {
		if (len == 0)
			continue;
		const char *sp = memchr(l, ' ', len);
		if (!sp || sp == l || (size_t)(sp - l) >= sizeof(out->name))
			return -1;
		unsigned v;
		if (parse_uint(sp + 1, len - (size_t)(sp - l) - 1, &v) || v > 0xfffff)
			return -1;
		if (n >= max)
			return DEVCG_CAPS_TOO_MANY;
		memcpy(out[n].name, l, (size_t)(sp - l));
		out[n].name[sp - l] = '\0';
		out[n].minor = v;
		n++;
	}
	return n;
}

/* The capabilities of GPU instance gi on the GPU of minor g: "gpuG/giGI/access"
 * and "gpuG/giGI/ciN/access". */
static bool cap_is_instance(const char *name, int g, int gi)
{
	char pre[48];
	int n = snprintf(pre, sizeof(pre), "gpu%d/gi%d/", g, gi);
	if (strncmp(name, pre, (size_t)n) != 0)
		return false;
	const char *rest = name + n;
	if (strcmp(rest, "access") == 0)
		return true;
	if (strncmp(rest, "ci", 2) != 0 || !isdigit((unsigned char)rest[2]))
		return false;
	rest += 2;
	while (isdigit((unsigned char)*rest))
		rest++;
	return strcmp(rest, "/access") == 0;
}

void devcg_rules_build(struct devcg_rules *r, const unsigned *gpu_minors, unsigned ngpus, int mig_gpu_minor,
		       int mig_gi, int caps_major, const struct devcg_cap *caps, int ncaps)
{
	memset(r, 0, sizeof(*r));
	for (unsigned i = 0; i < ngpus; i++)
		if (gpu_minors[i] < DEVCG_MODESET_MINOR)
			r->own[gpu_minors[i]] = true;
	if (mig_gpu_minor >= 0 && mig_gpu_minor < (int)DEVCG_MODESET_MINOR)
		r->own[mig_gpu_minor] = true;
	r->own[DEVCG_MODESET_MINOR] = r->own[DEVCG_CTL_MINOR] = true;
	if (caps_major < 0)
		return;
	r->have_caps = true;
	r->caps_major = (unsigned)caps_major;
	for (int i = 0; i < ncaps; i++) {
		bool mine = mig_gpu_minor >= 0 && cap_is_instance(caps[i].name, mig_gpu_minor, mig_gi);
		if (mine && r->ncaps_allow < DEVCG_MAX_CAPS)
			r->caps_allow[r->ncaps_allow++] = caps[i].minor;
		else if (!mine && r->ncaps_deny < DEVCG_MAX_CAPS)
			r->caps_deny[r->ncaps_deny++] = caps[i].minor;
	}
}

bool devcg_rules_allow(const struct devcg_rules *r, unsigned major, unsigned minor)
{
	if (major == DEVCG_NVIDIA_MAJOR)
		return minor > 255 || r->own[minor];
	if (r->have_caps && major == r->caps_major) {
		for (unsigned i = 0; i < r->ncaps_allow; i++)
			if (r->caps_allow[i] == minor)
				return true;
		return false;
	}
	return true;
}

/* ---- the BPF program ------------------------------------------------------------- */

/* struct bpf_cgroup_dev_ctx (linux/bpf.h): u32 access_type (access << 16 |
 * type), u32 major, u32 minor. The program returns 1 to allow, 0 to deny. */
enum { CTX_ACCESS = 0, CTX_MAJOR = 4, CTX_MINOR = 8 };
enum { R0 = 0, R1 = 1, R2 = 2, R3 = 3, R4 = 4 };
enum { TO_ALLOW = -1, TO_DENY = -2, TO_CAPS = -3 };

struct asm_buf {
	struct bpf_insn *v;
	size_t n, cap;
	int target[DEVCG_MAX_PROG]; /* symbolic jump target of each instruction, 0: none */
};

static void emit(struct asm_buf *a, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm, int target)
{
	if (a->n < a->cap && a->n < DEVCG_MAX_PROG) {
		struct bpf_insn i;
		memset(&i, 0, sizeof(i));
		i.code = code;
		i.dst_reg = dst & 0xf;
		i.src_reg = src & 0xf;
		i.off = off;
		i.imm = imm;
		a->v[a->n] = i;
		a->target[a->n] = target;
	}
	a->n++;
}

static void jmp_k(struct asm_buf *a, uint8_t op, uint8_t reg, int32_t imm, int target)
{
	emit(a, BPF_JMP | op | BPF_K, reg, 0, 0, imm, target);
}

size_t devcg_bpf_program(const struct devcg_rules *r, struct bpf_insn *out, size_t cap)
{
	struct asm_buf a;
	a.v = out;
	a.n = 0;
	a.cap = cap;
	emit(&a, BPF_LDX | BPF_W | BPF_MEM, R2, R1, CTX_ACCESS, 0, 0);
	emit(&a, BPF_ALU | BPF_AND | BPF_K, R2, 0, 0, 0xffff, 0); /* the device type */
	emit(&a, BPF_LDX | BPF_W | BPF_MEM, R3, R1, CTX_MAJOR, 0, 0);
	emit(&a, BPF_LDX | BPF_W | BPF_MEM, R4, R1, CTX_MINOR, 0, 0);
	jmp_k(&a, BPF_JNE, R2, BPF_DEVCG_DEV_CHAR, TO_ALLOW);
	jmp_k(&a, BPF_JNE, R3, DEVCG_NVIDIA_MAJOR, TO_CAPS);
	/* minors 254 (nvidia-modeset) and 255 (nvidiactl) stay open */
	jmp_k(&a, BPF_JGE, R4, DEVCG_MODESET_MINOR, TO_ALLOW);
	for (unsigned m = 0; m < DEVCG_MODESET_MINOR; m++)
		if (r->own[m])
			jmp_k(&a, BPF_JEQ, R4, (int32_t)m, TO_ALLOW);
	emit(&a, BPF_JMP | BPF_JA, 0, 0, 0, 0, TO_DENY);
	size_t caps_at = a.n;
	if (r->have_caps) {
		jmp_k(&a, BPF_JNE, R3, (int32_t)r->caps_major, TO_ALLOW);
		for (unsigned i = 0; i < r->ncaps_allow; i++)
			jmp_k(&a, BPF_JEQ, R4, (int32_t)r->caps_allow[i], TO_ALLOW);
		emit(&a, BPF_JMP | BPF_JA, 0, 0, 0, 0, TO_DENY);
	}
	size_t allow_at = a.n;
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 1, 0);
	emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0, 0);
	size_t deny_at = a.n;
	emit(&a, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0, 0);
	emit(&a, BPF_JMP | BPF_EXIT, 0, 0, 0, 0, 0);
	if (a.n > cap || a.n > DEVCG_MAX_PROG)
		return 0;
	if (!r->have_caps)
		caps_at = allow_at;
	for (size_t i = 0; i < a.n; i++) {
		size_t to;
		switch (a.target[i]) {
		case TO_ALLOW: to = allow_at; break;
		case TO_DENY: to = deny_at; break;
		case TO_CAPS: to = caps_at; break;
		default: continue;
		}
		out[i].off = (int16_t)((long)to - (long)i - 1);
	}
	return a.n;
}

int devcg_v1_deny_lines(const struct devcg_rules *r, int (*fn)(const char *line, void *arg), void *arg)
{
	char line[48];
	int rc;
	for (unsigned m = 0; m < DEVCG_MODESET_MINOR; m++) {
		if (r->own[m])
			continue;
		snprintf(line, sizeof(line), "c %u:%u rwm", DEVCG_NVIDIA_MAJOR, m);
		if ((rc = fn(line, arg)) != 0)
			return rc;
	}
	for (unsigned i = 0; r->have_caps && i < r->ncaps_deny; i++) {
		snprintf(line, sizeof(line), "c %u:%u rwm", r->caps_major, r->caps_deny[i]);
		if ((rc = fn(line, arg)) != 0)
			return rc;
	}
	return 0;
}
