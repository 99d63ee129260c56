/* SPDX-License-Identifier: Apache-2.0 */
/* gres.c - gres.conf lines from a snapshot (gres.h). */
#include "slurm/gres.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cpulist.h"
#include "device/topo_score.h"
#include "device/snapshot.h"

void slurm_gres_type_name(const char *gpu_name, char *out, size_t outlen)
{
	size_t n = 0;
	bool sep = false;
	if (!outlen)
		return;
	for (const char *s = gpu_name ? gpu_name : ""; *s && n + 1 < outlen; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '.') {
			if (sep && n > 0 && n + 2 < outlen)
				out[n++] = '_';
			sep = false;
			out[n++] = (char)tolower(c);
		} else {
			sep = true;
		}
	}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, outlen, "gpu");
}

bool slurm_node_name_ok(const char *name)
{
	size_t n = strlen(name);
	/* a leading '-' would read as an option where the name is an argument of its own */
	if (n == 0 || n > 255 || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr(".-_[],", name[i]))
			return false;
	return true;
}

bool slurm_host_name_ok(const char *name)
{
	/* "ALL" is every node to scontrol (NodeName=ALL), in any case */
	return slurm_node_name_ok(name) && !strpbrk(name, "[],") && strcasecmp(name, "ALL") != 0;
}

/* The Links= value between GPUs a and b: -1 when a == b, else the NVLink
 * count, taken from the pool's pair score. */
static int slurm_gres_link_count(const struct gpu_link *l, bool self)
{
	if (self)
		return -1;
	return (int)(topo_pair_score(l) / TOPO_NVLINK_SCORE);
}

int slurm_gres_cores(const char *cpulist, const struct slurm_gres_opts *o, char *out, size_t outlen, char *err,
		     size_t errlen)
{
	unsigned ncpu = o->cpu_core ? o->ncpu : SLURM_MAX_CPUS;
	uint8_t cpus[SLURM_MAX_CPUS / 8], cores[SLURM_MAX_CPUS / 8];
	if (ncpu > SLURM_MAX_CPUS)
		ncpu = SLURM_MAX_CPUS;
	if (cpulist_parse(cpulist, cpus, ncpu, err, errlen))
		return -1;
	memset(cores, 0, sizeof(cores));
	unsigned maxcore = 0;
	for (unsigned c = 0; c < ncpu; c++) {
		if (!(cpus[c / 8] >> (c % 8) & 1))
			continue;
		int core = o->cpu_core ? o->cpu_core[c] : (int)c;
		if (core < 0 || core >= SLURM_MAX_CPUS) {
			snprintf(err, errlen, "CPU %u has no known core", c);
			return -1;
		}
		cores[core / 8] |= (uint8_t)(1u << (core % 8));
		if ((unsigned)core + 1 > maxcore)
			maxcore = (unsigned)core + 1;
	}
	struct abuf b;
	abuf_init(&b);
	for (unsigned c = 0; c < maxcore; c++) {
		if (!(cores[c / 8] >> (c % 8) & 1))
			continue;
		unsigned e = c;
		while (e + 1 < maxcore && (cores[(e + 1) / 8] >> ((e + 1) % 8) & 1))
			e++;
		abuf_printf(&b, b.len ? ",%u" : "%u", c);
		if (e > c)
			abuf_printf(&b, "-%u", e);
		c = e;
	}
	int rc = 0;
	if (b.oom || b.len >= outlen) {
		snprintf(err, errlen, "core list too long");
		rc = -1;
	} else {
		memcpy(out, b.len ? b.p : "", b.len + 1);
	}
	abuf_free(&b);
	return rc;
}

unsigned slurm_mig_gi_minor(unsigned gpu, unsigned gi)
{
	return 3 + gpu * 135 + gi * 9;
}

unsigned slurm_mig_ci_minor(unsigned gpu, unsigned gi, unsigned ci)
{
	return slurm_mig_gi_minor(gpu, gi) + 1 + ci;
}

static bool gpu_in_mig_mode(const struct gpu_view *v)
{
	return VAL_HAS(v->st.mig_mode) && v->st.mig_mode.v == 1;
}

static void gpu_type(const struct gpu_view *v, const struct slurm_gres_opts *o, char *out, size_t outlen)
{
	if (o->type && o->type[0])
		snprintf(out, outlen, "%s", o->type);
	else
		slurm_gres_type_name(VAL_HAS(v->st.name) ? v->st.name.s : "gpu", out, outlen);
}

static const char *dev_dir(const struct slurm_gres_opts *o)
{
	return o->dev_dir && o->dev_dir[0] ? o->dev_dir : "/dev";
}

static void line_start(struct abuf *out, const struct slurm_gres_opts *o)
{
	if (o->node && o->node[0])
		abuf_printf(out, "NodeName=%s ", o->node);
	abuf_puts(out, "Name=gpu ");
}

/* " Cores=..." when the GPU's affinity is known; a bad list is an error. */
static int put_cores(struct abuf *out, const struct gpu_view *v, const struct slurm_gres_opts *o, char *err,
		     size_t errlen)
{
	if (!VAL_HAS(v->st.cpu_affinity) || !v->st.cpu_affinity.s[0])
		return 0;
	char cores[1024], e[160];
	if (slurm_gres_cores(v->st.cpu_affinity.s, o, cores, sizeof(cores), e, sizeof(e))) {
		snprintf(err, errlen, "GPU %u: %s", v->st.index, e);
		return -1;
	}
	if (cores[0])
		abuf_printf(out, " Cores=%s", cores);
	return 0;
}

int slurm_gres_conf(const struct snapshot *snap, const struct slurm_gres_opts *o, struct abuf *out, char *err,
		    size_t errlen)
{
	const char *dd = dev_dir(o);
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		char type[SLURM_TYPE_LEN];
		if (!VAL_HAS(v->st.name)) {
			abuf_printf(out, "# GPU %u: not answering, left out\n", i);
			continue;
		}
		gpu_type(v, o, type, sizeof(type));
		if (gpu_in_mig_mode(v)) {
			for (unsigned k = 0; k < v->nmig; k++) {
				const struct gpu_mig *m = &v->mig[k];
				line_start(out, o);
				abuf_printf(out, "Type=%s_%s MultipleFiles=%s/nvidia%u,%s/nvidia-caps/nvidia-cap%u,"
					    "%s/nvidia-caps/nvidia-cap%u", type, m->profile, dd, i, dd,
					    slurm_mig_gi_minor(i, m->gi_id), dd, slurm_mig_ci_minor(i, m->gi_id, m->ci_id));
				if (put_cores(out, v, o, err, errlen))
					return -1;
				abuf_putc(out, '\n');
			}
			if (v->nmig == 0)
				abuf_printf(out, "# GPU %u: MIG mode on with no instances, left out\n", i);
			continue;
		}
		line_start(out, o);
		abuf_printf(out, "Type=%s File=%s/nvidia%u", type, dd, i);
		if (put_cores(out, v, o, err, errlen))
			return -1;
		abuf_puts(out, " Links=");
		for (unsigned j = 0; j < snap->n; j++)
			abuf_printf(out, j ? ",%d" : "%d", slurm_gres_link_count(&snap->link[i][j], i == j));
		abuf_putc(out, '\n');
	}
	if (out->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int slurm_gres_node_line(const struct snapshot *snap, const struct slurm_gres_opts *o, struct abuf *out, char *err,
			 size_t errlen)
{
	/* counts per type, in order of first appearance */
	char types[GPU_MAX_GPUS * GPU_MAX_MIG][SLURM_TYPE_LEN + 40];
	unsigned counts[GPU_MAX_GPUS * GPU_MAX_MIG], nt = 0;
	for (unsigned i = 0; i < snap->n; i++) {
		const struct gpu_view *v = &snap->gpu[i];
		if (!VAL_HAS(v->st.name))
			continue;
		char type[SLURM_TYPE_LEN], t[SLURM_TYPE_LEN + 40];
		gpu_type(v, o, type, sizeof(type));
		unsigned reps = gpu_in_mig_mode(v) ? v->nmig : 1;
		for (unsigned k = 0; k < reps; k++) {
			if (gpu_in_mig_mode(v))
				snprintf(t, sizeof(t), "%s_%s", type, v->mig[k].profile);
			else
				snprintf(t, sizeof(t), "%s", type);
			unsigned x = 0;
			while (x < nt && strcmp(types[x], t) != 0)
				x++;
			if (x == nt) {
				snprintf(types[nt], sizeof(types[nt]), "%s", t);
				counts[nt++] = 0;
			}
			counts[x]++;
		}
	}
	abuf_printf(out, "NodeName=%s Gres=", o->node && o->node[0] ? o->node : "HOST");
	for (unsigned x = 0; x < nt; x++)
		abuf_printf(out, "%sgpu:%s:%u", x ? "," : "", types[x], counts[x]);
	if (nt == 0)
		abuf_puts(out, "gpu:0");
	abuf_putc(out, '\n');
	if (out->oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int slurm_gres_conf_file(const struct snapshot *snap, const struct slurm_gres_opts *o, const char *server,
			 bool simulated, bool fragment, struct abuf *out, char *err, size_t errlen)
{
	abuf_printf(out, "# gres.conf for %s%s, written by gpuctl slurm gres-conf\n",
		    o->node && o->node[0] ? o->node : server, simulated ? " (SIMULATED server)" : "");
	abuf_puts(out, "# Links: NVLinks to GPU 0,1,... (-1 itself); the pool's placement ranks pairs the same way\n");
	int rc = slurm_gres_conf(snap, o, out, err, errlen);
	if (!rc && fragment) {
		abuf_puts(out, "# slurm.conf (GresTypes=gpu; merge with the node's CPUs, memory...):\n# ");
		rc = slurm_gres_node_line(snap, o, out, err, errlen);
	}
	return rc;
}
