/* SPDX-License-Identifier: Apache-2.0 */
/* pages.c - memory in pages of its own (pages.h) */
#include "pages.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t page_round(size_t n)
{
	size_t pg = page_size();
	return (n + pg - 1) / pg * pg;
}

void *pages_alloc(size_t n)
{
	void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void pages_free(void *p, size_t n)
{
	if (p)
		munmap(p, page_round(n));
}

void pages_drop(void *p, size_t n)
{
	madvise(p, page_round(n), MADV_DONTNEED);
}

void pages_drop_inside(void *p, size_t n)
{
	uintptr_t pg = page_size(), at = (uintptr_t)p;
	uintptr_t lo = (at + pg - 1) / pg * pg, hi = (at + n) / pg * pg;
	if (p && hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
