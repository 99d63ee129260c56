/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_cdidocker.c - the CDI spec read back as docker flags
 * (container_docker_cdi_flags, src/pool/container.c) on arbitrary bytes as
 * the spec and "0,GPU-a" as the devices: no crash, one-line messages, and
 * every flag is a --device, --volume or --env whose paths cannot break
 * docker's HOST:PATH[:OPT] syntax. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool/container.h"

/* The paths of a --device=HOST:PATH[:PERMS] or --volume=HOST:PATH:ro|rw flag: two or three fields. */
static int fields(const char *v)
{
	int n = 1;
	for (; *v; v++)
		if (*v == ':')
			n++;
		else if (*v == ',' || (unsigned char)*v < 0x20)
			return -1;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *spec = json_loadb((const char *)data, size, 0, NULL);
	char err[256], lost[300];
	err[0] = '\0';
	char **f = container_docker_cdi_flags(spec, "0,GPU-a", lost, sizeof(lost), err, sizeof(err));
	if (!f && (!err[0] || strchr(err, '\n')))
		__builtin_trap();
	if (strchr(lost, '\n'))
		__builtin_trap();
	for (size_t i = 0; f && f[i]; i++) {
		int n = -1;
		if (strncmp(f[i], "--device=", 9) == 0)
			n = fields(f[i] + 9) >= 2 && fields(f[i] + 9) <= 3 ? 0 : -1;
		else if (strncmp(f[i], "--volume=", 9) == 0)
			n = fields(f[i] + 9) == 3 ? 0 : -1;
		else if (strncmp(f[i], "--env=", 6) == 0)
			n = strchr(f[i] + 6, '=') && f[i][6] != '=' ? 0 : -1;
		if (n != 0)
			__builtin_trap();
		free(f[i]);
	}
	free(f);
	json_decref(spec);
	return 0;
}
