/* SPDX-License-Identifier: Apache-2.0 */
/*
 * units.h - the one grammar for durations and byte sizes that every option
 * and setting reads (docs/units.md). Pure: no I/O, no allocation.
 *
 * A duration is a number with a unit (ns, us, ms, s, m, h, d), or several
 * from the largest unit down, each once ("1h30m", "1d12h"); a number alone
 * is seconds ("30", "0.5"). A size in bytes is a number with an optional
 * K, M, G, T or P, each a power of 1024 whatever follows it ("4K", "4KB" and
 * "4KiB" are 4096 bytes), and an optional "B". Numbers are decimal: digits,
 * at most one point and at most 9 digits after it; no sign, exponent, hex,
 * space, "inf" or "nan". A fraction below the smallest step (1 ns, 1 byte)
 * is dropped. A length in tokens reads K and M as a size does (4k = 4096).
 */
#ifndef GPUCTL_UNITS_H
#define GPUCTL_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_NS_PER_S 1000000000ull
#define UNITS_NS_PER_DAY (86400ull * UNITS_NS_PER_S)
/* 1024P: the largest byte size a setting or a request takes (the agent's, the pool's). */
#define UNITS_SIZE_MAX (1ull << 60)

/* Reads a duration into *ns, within [min_ns, max_ns]. Returns 0, or -1 with
 * a one-line message ("bad duration 'x' (...)", "duration 'x' out of range
 * (10ms to 1h)") that quotes at most 40 bytes of s, control characters as '?'. */
int units_parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *ns, char *err, size_t errlen);
/* Reads a size in bytes into *bytes, within [min, max]; messages as above
 * ("bad size 'x' (...)", "size 'x' out of range (1 to 64G)"). */
int units_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *bytes, char *err, size_t errlen);

/* A duration with a unit, in whole seconds, within [min_s, max_s]: where a
 * number alone meant another unit before (minutes for Slurm's --time and the
 * pool's log retention), it is refused with the fix in the message ("bad
 * time limit '30': a number alone is ambiguous here; write 30m or 30s", what
 * naming the value); "0" stays 0. A fraction of a second is refused
 * ("1500ms": whole seconds). */
int units_parse_seconds(const char *s, const char *what, uint64_t min_s, uint64_t max_s, uint64_t *seconds, char *err,
			size_t errlen);

/* A length in tokens (a sequence, a context, positions): a whole number with
 * an optional K or M (either case), powers of 1024 as for sizes, since model
 * cards' "4k", "32k", "128k" contexts are 4096, 32768, 131072 tokens. Within
 * [min, max]; "bad length 'x' (...)", "length 'x' out of range (1 to 1M)". */
int units_parse_length(const char *s, uint64_t min, uint64_t max, uint64_t *n, char *err, size_t errlen);

/* Whether s is a number alone, no unit ("30", "0.5"): what a caller refuses
 * where the unit would be ambiguous. */
int units_is_bare_number(const char *s);

/* The duration in the largest unit that holds it exactly ("2h", "1500ms",
 * "0s"): what units_parse_duration reads back to the same value. */
void units_fmt_duration(uint64_t ns, char *out, size_t outlen);
/* The size in the largest power of 1024 that holds it exactly ("64G", "1536",
 * "0"): read back by units_parse_size to the same value. */
void units_fmt_size(uint64_t bytes, char *out, size_t outlen);

/* s as a message quotes it: at most 40 bytes, control characters as '?',
 * so that an error stays one line. out must hold 41 bytes. */
const char *units_quoted(const char *s, char out[41]);

#endif
