/* SPDX-License-Identifier: Apache-2.0 */
/* exitcodes.h - gpuctl's documented exit codes (docs/exit-codes.md).
 * health/diag use 0/1/2 for healthy/warning/failure; the rest follow sysexits.h
 * so that no error can be mistaken for a health verdict. */
#ifndef GPUCTL_EXITCODES_H
#define GPUCTL_EXITCODES_H

enum gpuctl_exit {
	EXIT_OK = 0,
	EXIT_WARN = 1,         /* health/diag: warnings; bench: a result under its threshold */
	EXIT_FAIL = 2,         /* health/diag: a failure */
	EXIT_USAGE = 64,       /* bad command, flag or argument */
	EXIT_DATAERR = 65,     /* malformed input file or request */
	EXIT_NOINPUT = 66,     /* input file missing or unreadable */
	EXIT_UNAVAILABLE = 69, /* no driver, no GPU, no kernels module: could not check */
	EXIT_SOFTWARE = 70,    /* internal error */
	EXIT_IOERR = 74,       /* I/O error (socket, database, output) */
	EXIT_TEMPFAIL = 75,    /* try again: agent not running, timeout */
};

#endif
