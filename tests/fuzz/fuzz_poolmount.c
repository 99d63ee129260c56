/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_poolmount.c - the checks of what a container job names
 * (src/pool/container.c) on arbitrary bytes, as a mount "SRC:DST[:ro|:rw]",
 * as a host path with the pool's own state as an extra path, and as an image
 * name: no crash; a refusal is one non-empty line; what is accepted holds
 * what the checks promise (docs/containers.md, "Bad input"): a mount of two
 * absolute paths without ',' or a ".." component, whose SRC passes the host
 * path check on its own and whose option is ro or rw; an image name that
 * starts with a letter or digit and has no transport before its first '/'. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pool/container.h"

static void one_line(const char *err)
{
	if (!err[0])
		__builtin_trap();
	for (const char *c = err; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			__builtin_trap();
}

/* s holds a ".." component */
static int has_dotdot(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && s[e] != '/')
			e++;
		if (e - i == 2 && s[i] == '.' && s[i + 1] == '.')
			return 1;
		i = e + 1;
	}
	return 0;
}

static void check_mount(const char *s)
{
	char err[256] = "";
	if (container_check_mount(s, err, sizeof(err)) != 0) {
		one_line(err);
		return;
	}
	const char *c1 = strchr(s, ':');
	if (!c1 || s[0] != '/' || c1[1] != '/' || strchr(s, ','))
		__builtin_trap();
	const char *c2 = strchr(c1 + 1, ':');
	if (c2 && strcmp(c2 + 1, "ro") != 0 && strcmp(c2 + 1, "rw") != 0)
		__builtin_trap();
	size_t dst_len = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
	if (has_dotdot(s, (size_t)(c1 - s)) || has_dotdot(c1 + 1, dst_len))
		__builtin_trap();
	char src[4096];
	if (container_mount_src(s, src, sizeof(src)) != 0 || strlen(src) != (size_t)(c1 - s))
		__builtin_trap();
	if (container_check_host_path(src, NULL, 0, err, sizeof(err)) != 0)
		__builtin_trap();
}

static void check_image(const char *s)
{
	char err[256] = "";
	if (container_check_image(s, err, sizeof(err)) != 0) {
		one_line(err);
		return;
	}
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= '0' && s[0] <= '9')))
		__builtin_trap();
	const char *slash = strchr(s, '/'), *colon = strchr(s, ':');
	if (slash && colon && colon < slash && strspn(colon + 1, "0123456789") != (size_t)(slash - colon - 1))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[8200];
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
	memcpy(s, data, n);
	s[n] = '\0';
	check_mount(s);
	check_image(s);
	if (s[0] == '/') {
		const char *const extra[] = { "/srv/state", "/srv/run/pool.sock" };
		char err[256] = "";
		if (container_check_host_path(s, extra, 2, err, sizeof(err)) != 0)
			one_line(err);
		else if (strncmp(s, "/srv/state", 10) == 0 && (s[10] == '\0' || s[10] == '/'))
			__builtin_trap(); /* the pool's own state, written plainly */
	}
	return 0;
}
