/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_gpuselect.c - libFuzzer target for the `-i/--id` GPU spec parser
 * (src/core/gpu_select.c). Any input must parse or fail with a message,
 * a successful parse selects only GPUs that exist, and the form-only check
 * (gpu_select_check) never refuses a spec that parses; the index-only list
 * (gpu_select_indexes) agrees with the full grammar. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_select.h"

static const struct gpu_ident ids[4] = {
	{ "GPU-0a1b2c3d-1111-2222-3333-444444444444", "00000000:18:00.0" },
	{ "GPU-0a1b2c3d-9999-2222-3333-444444444444", "00000000:2A:00.0" },
	{ "GPU-5e6f7a8b-1111-2222-3333-444444444444", "00000001:3A:00.0" },
	{ NULL, NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	uint64_t mask = 0;
	char err[128];
	err[0] = '\0';
	int rc = gpu_select_parse(spec, ids, 4, &mask, err, sizeof(err));
	if (rc == 0 && (mask & ~(uint64_t)0xf) != 0)
		abort(); /* selected a GPU that does not exist */
	if (rc != 0 && err[0] == '\0')
		abort(); /* failed without saying why */
	char form_err[128] = "";
	int form = gpu_select_check(spec, form_err, sizeof(form_err));
	if (form != 0 && (rc == 0 || form_err[0] == '\0'))
		abort(); /* the form check refused a spec the GPUs accept, or said nothing */
	/* the index-only list: never an empty mask, a message when refused, and
	 * what it takes the full grammar takes alike over 64 GPUs */
	uint64_t idx = 0, full = 0;
	char ierr[128] = "";
	if (gpu_select_indexes(spec, &idx, ierr, sizeof(ierr)) == 0) {
		if (idx == 0 || gpu_select_parse(spec, NULL, 64, &full, err, sizeof(err)) != 0 || full != idx)
			abort();
	} else if (ierr[0] == '\0' || strchr(ierr, '\n')) {
		abort();
	}
	struct pci_addr a;
	if (gpu_busid_parse(spec, &a) == 0 && (a.bus > 0xff || a.device > 0x1f || a.function > 7))
		abort();
	free(spec);
	return 0;
}
