/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvml_fields.c - the batched reads of the nvml backend.
 *
 * On an H200 every NVML call costs about its wall time in CPU (1-3 ms: the
 * library spins while the GPU's firmware answers), and a sample of every
 * group used to make ~120 calls per GPU, 90 of them for NVLink (18 links x
 * state + 4 error counters). nvmlDeviceGetFieldValues answers many metrics in
 * one call (what DCGM does), each with its own return code. So a sample asks
 * for all the metrics of its groups that have a field id in one batch, and
 * makes an own call only for a metric the batch does not deliver on this GPU
 * (the field is unknown to the driver, or answered "not supported"). What it
 * learns is kept per GPU: a metric neither way supports costs no call at all
 * after the first sample.
 */
#include <stdio.h>
#include <string.h>

#include "nvml_priv.h"

_Thread_local unsigned long nvml_thread_calls;

void nvml_note(struct rd *rd, nvmlReturn_t r, const char *what)
{
	if (r == NVML_ERROR_GPU_IS_LOST)
		rd->lost = true;
	if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND &&
	    rd->first_error == NVML_SUCCESS) {
		rd->first_error = r;
		rd->first_what = what;
	}
}

void nvml_put_u64(struct rd *rd, u64v *f, nvmlReturn_t r, uint64_t v, const char *what)
{
	nvml_note(rd, r, what);
	if (r == NVML_SUCCESS)
		VAL_SET(*f, v);
	else
		f->st = nvml_val_status(r);
}

void nvml_put_str(strv *f, nvmlReturn_t r, const char *s)
{
	if (r == NVML_SUCCESS) {
		snprintf(f->s, sizeof(f->s), "%s", s);
		f->st = VAL_OK;
	} else {
		f->st = nvml_val_status(r);
	}
}

/* Per-link counter ids. Replay and recovery: the scoped DL ids (scopeId =
 * link), which every link has (an H200 answers the per-link ids of links 0-11
 * "not supported"). The CRC counters: the per-link ids of links 0-5 and 6-11
 * (older GPUs answer them); NVML_FI_DEV_NVLINK_ERROR_DL_CRC exists too, but
 * nvml.h does not say whether it is the flit or the data CRC counter, so
 * those keep their own calls rather than report one under the other's name. */
static unsigned link_field(unsigned kind, unsigned link, unsigned *scope)
{
	static const unsigned l0[NVL_KINDS] = { 0, 0, 0, NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0,
						NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0 };
	static const unsigned l6[NVL_KINDS] = { 0, 0, 0, NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L6,
						NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L6 };
	*scope = link;
	if (kind == NVL_STATE)
		return NVML_FI_DEV_NVLINK_GET_STATE;
	if (kind == NVL_REPLAY)
		return NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY;
	if (kind == NVL_RECOVERY)
		return NVML_FI_DEV_NVLINK_ERROR_DL_RECOVERY;
	*scope = 0;
	if (link < 6)
		return l0[kind] + link;
	if (link < 12)
		return l6[kind] + (link - 6);
	return 0;
}

/* The field table's BATCH and FLAG rows: the field id of each slot. */
#define FVS_TABLE_ID(member, group, unit, api_key, role, metric, type, labels, help, series, read, field, ...) \
	FVS_TABLE_ID_##read(member, field)
#define FVS_TABLE_ID_BATCH(member, field) [FVS_F_##member] = field,
#define FVS_TABLE_ID_FLAG(member, field) [FVS_F_##member] = field,
#define FVS_TABLE_ID_CODE(member, field)
static const unsigned table_field[FVS_NVL_BASE + 1] = { GPU_SAMPLE_FIELDS(FVS_TABLE_ID) };

/* The field table's FLAG rows: read as 1/0, whatever non-zero value the driver uses. */
#define FVS_TABLE_FLAG(member, group, unit, api_key, role, metric, type, labels, help, series, read, field, ...) \
	FVS_TABLE_FLAG_##read(member)
#define FVS_TABLE_FLAG_BATCH(member)
#define FVS_TABLE_FLAG_FLAG(member) [FVS_F_##member] = true,
#define FVS_TABLE_FLAG_CODE(member)
static const bool table_flag[FVS_NVL_BASE + 1] = { GPU_SAMPLE_FIELDS(FVS_TABLE_FLAG) };

/* Pure: the field id and scope of a slot; false if none. */
static bool nvml_fv_slot_field(unsigned slot, unsigned *id, unsigned *scope)
{
	if (slot >= FVS_COUNT)
		return false;
	if (slot < FVS_NVL_BASE) {
		*id = table_field[slot];
		*scope = 0; /* FVS_F_power_mw: the GPU alone */
		return *id != 0;
	}
	unsigned k = slot - FVS_NVL_BASE;
	*id = link_field(k % NVL_KINDS, k / NVL_KINDS, scope);
	return *id != 0;
}

/* Flags read as 1/0, whatever non-zero value the driver uses. */
static uint64_t slot_value(unsigned slot, uint64_t v)
{
	bool flag = slot < FVS_NVL_BASE ? table_flag[slot] : (slot - FVS_NVL_BASE) % NVL_KINDS == NVL_STATE;
	return flag ? v != 0 : v;
}

/* nvmlDeviceGetRemappedRows fills four slots: called once per read. */
struct remap_once {
	bool done;
	nvmlReturn_t r;
	unsigned int v[4]; /* corrected, uncorrected, pending, failure */
};

/* The own call of one slot. */
static nvmlReturn_t slot_call(struct nvml_api *api, nvmlDevice_t h, unsigned slot, uint64_t *v,
			      struct remap_once *rm)
{
	unsigned int u = 0;
	unsigned long long ull = 0;
	nvmlReturn_t r;
	int policy = -1;
	switch (slot) {
	case FVS_F_power_mw:
		r = NVML_CALL(api, DeviceGetPowerUsage, h, &u);
		*v = u;
		return r;
	case FVS_F_energy_mj:
		r = NVML_CALL(api, DeviceGetTotalEnergyConsumption, h, &ull);
		*v = ull;
		return r;
	case FVS_F_ecc_vol_corrected:
	case FVS_F_ecc_vol_uncorrected:
	case FVS_F_ecc_agg_corrected:
	case FVS_F_ecc_agg_uncorrected: {
		int type = slot == FVS_F_ecc_vol_corrected || slot == FVS_F_ecc_agg_corrected
				   ? NVML_MEMORY_ERROR_TYPE_CORRECTED
				   : NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
		int counter = slot == FVS_F_ecc_vol_corrected || slot == FVS_F_ecc_vol_uncorrected ? NVML_VOLATILE_ECC
											   : NVML_AGGREGATE_ECC;
		r = NVML_CALL(api, DeviceGetTotalEccErrors, h, type, counter, &ull);
		*v = ull;
		return r;
	}
	case FVS_F_ecc_dram_uncorrected:
		r = NVML_CALL(api, DeviceGetMemoryErrorCounter, h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
			      NVML_MEMORY_LOCATION_DRAM, &ull);
		*v = ull;
		return r;
	case FVS_F_retired_pages_sbe:
	case FVS_F_retired_pages_dbe:
		r = NVML_CALL(api, DeviceGetRetiredPages, h,
			      slot == FVS_F_retired_pages_sbe ? NVML_PAGE_RETIREMENT_CAUSE_SBE : NVML_PAGE_RETIREMENT_CAUSE_DBE,
			      &u, NULL);
		*v = u;
		return r == NVML_ERROR_INSUFFICIENT_SIZE ? NVML_SUCCESS : r; /* u holds how many there are */
	case FVS_F_retired_pages_pending: {
		int pend = 0;
		r = NVML_CALL(api, DeviceGetRetiredPagesPendingStatus, h, &pend);
		*v = (uint64_t)pend;
		return r;
	}
	case FVS_F_remap_corrected:
	case FVS_F_remap_uncorrected:
	case FVS_F_remap_pending:
	case FVS_F_remap_failure:
		if (!rm->done) {
			rm->done = true;
			rm->r = NVML_CALL(api, DeviceGetRemappedRows, h, &rm->v[0], &rm->v[1], &rm->v[2], &rm->v[3]);
		}
		/* corrected, uncorrected, pending, failure */
		*v = rm->v[slot == FVS_F_remap_corrected ? 0 : slot == FVS_F_remap_uncorrected ? 1 : slot == FVS_F_remap_pending ? 2 : 3];
		return rm->r;
	case FVS_F_pcie_replays:
		r = NVML_CALL(api, DeviceGetPcieReplayCounter, h, &u);
		*v = u;
		return r;
	case FVS_F_viol_power_ns: policy = NVML_PERF_POLICY_POWER; break;
	case FVS_F_viol_thermal_ns: policy = NVML_PERF_POLICY_THERMAL; break;
	case FVS_F_viol_sync_boost_ns: policy = NVML_PERF_POLICY_SYNC_BOOST; break;
	case FVS_F_viol_board_limit_ns: policy = NVML_PERF_POLICY_BOARD_LIMIT; break;
	case FVS_F_viol_low_util_ns: policy = NVML_PERF_POLICY_LOW_UTILIZATION; break;
	case FVS_F_viol_reliability_ns: policy = NVML_PERF_POLICY_RELIABILITY; break;
	default:
		break;
	}
	if (policy >= 0) {
		nvmlViolationTime_t vt = { 0, 0 };
		r = NVML_CALL(api, DeviceGetViolationStatus, h, policy, &vt);
		*v = vt.violationTime;
		return r;
	}
	if (slot < FVS_NVL_BASE)
		return NVML_ERROR_NOT_SUPPORTED; /* a field only (temp_mem_c, power_instant_mw, ...) */
	unsigned k = slot - FVS_NVL_BASE, link = k / NVL_KINDS;
	static const int counter[NVL_KINDS] = { 0, NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY,
						NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA };
	if (k % NVL_KINDS == NVL_STATE) {
		int state = 0;
		r = NVML_CALL(api, DeviceGetNvLinkState, h, link, &state);
		*v = (uint64_t)state;
		return r;
	}
	r = NVML_CALL(api, DeviceGetNvLinkErrorCounter, h, link, counter[k % NVL_KINDS], &ull);
	*v = ull;
	return r;
}

/* Answers that mean "this way does not deliver it", as opposed to a failure. */
static bool not_here(nvmlReturn_t r)
{
	return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_INVALID_ARGUMENT;
}

/* A link error counter's slot (not the link state); *k its cache index. */
static bool link_counter_slot(unsigned slot, unsigned *k)
{
	*k = slot - FVS_NVL_BASE;
	return slot >= FVS_NVL_BASE && (slot - FVS_NVL_BASE) % NVL_KINDS != NVL_STATE;
}

uint64_t nvml_fields_read(struct nvml_priv *p, unsigned gpu, nvmlDevice_t h, uint64_t now_ns,
			  const struct nvml_fv_want *want, unsigned n, struct rd *rd)
{
	struct nvml_api *api = &p->api;
	struct nvml_gpu *g = &p->gpu[gpu];
	nvmlFieldValue_t fv[FVS_COUNT];
	unsigned batch_of[FVS_COUNT]; /* fv[k] answers want[batch_of[k]] */
	bool own_call[FVS_COUNT];
	unsigned nb = 0;
	if (n > FVS_COUNT)
		n = FVS_COUNT;
	/* the NVLink counters that need their own calls: all of them now, or none
	 * (and then every link error counter from their last reading) */
	bool links_due = !g->link_own_read_ns || now_ns < g->link_own_read_ns ||
			 now_ns - g->link_own_read_ns >= NVML_LINK_COUNTER_PERIOD_NS;
	bool links_read = false, links_cached = false;
	memset(own_call, 0, sizeof(own_call));
	for (unsigned i = 0; i < n; i++) {
		unsigned slot = want[i].slot, id = 0, scope = 0;
		if (slot >= FVS_COUNT) {
			want[i].dst->st = VAL_ERROR;
			continue;
		}
		if (g->fv_route[slot] == FV_NONE) {
			want[i].dst->st = VAL_UNSUPPORTED;
		} else if (g->fv_route[slot] == FV_BATCH && !g->fv_off && nvml_fv_slot_field(slot, &id, &scope)) {
			memset(&fv[nb], 0, sizeof(fv[nb]));
			fv[nb].fieldId = id;
			fv[nb].scopeId = scope;
			batch_of[nb++] = i;
		} else {
			if (g->fv_route[slot] == FV_BATCH && (g->fv_off || !nvml_fv_slot_field(slot, &id, &scope)))
				g->fv_route[slot] = FV_CALL;
			own_call[i] = true;
		}
	}
	if (nb) {
		nvmlReturn_t r = NVML_CALL(api, DeviceGetFieldValues, h, (int)nb, fv);
		if (r == NVML_ERROR_GPU_IS_LOST) {
			nvml_note(rd, r, "field values");
			for (unsigned k = 0; k < nb; k++)
				want[batch_of[k]].dst->st = VAL_ERROR;
			return 0;
		}
		if (r != NVML_SUCCESS) {
			/* refused as a whole: own calls, this time; for good if it will not change */
			if (not_here(r))
				g->fv_off = true;
			for (unsigned k = 0; k < nb; k++)
				own_call[batch_of[k]] = true;
		} else {
			for (unsigned k = 0; k < nb; k++) {
				const struct nvml_fv_want *w = &want[batch_of[k]];
				nvmlReturn_t fr = fv[k].nvmlReturn;
				uint64_t v = 0;
				unsigned lk;
				if (fr == NVML_SUCCESS && link_counter_slot(w->slot, &lk) && !links_due &&
				    g->link_own_have[lk]) {
					/* read with the others, at their last reading */
					nvml_put_u64(rd, w->dst, g->link_own_rc[lk], g->link_own_val[lk], "NVML");
					links_cached = true;
				} else if (fr == NVML_SUCCESS && nvml_field_value_u64(&fv[k], &v)) {
					VAL_SET(*w->dst, slot_value(w->slot, v));
					if (link_counter_slot(w->slot, &lk)) {
						g->link_own_val[lk] = v;
						g->link_own_rc[lk] = NVML_SUCCESS;
						g->link_own_have[lk] = true;
					}
				} else if (fr == NVML_SUCCESS || not_here(fr)) {
					g->fv_route[w->slot] = FV_CALL; /* try its own call, from now on */
					own_call[batch_of[k]] = true;
				} else {
					nvml_put_u64(rd, w->dst, fr, 0, "field values");
				}
			}
		}
	}
	struct remap_once rm = { false, NVML_SUCCESS, { 0, 0, 0, 0 } };
	for (unsigned i = 0; i < n && !rd->lost; i++) {
		if (!own_call[i])
			continue;
		unsigned slot = want[i].slot;
		uint64_t v = 0;
		nvmlReturn_t r;
		unsigned k;
		bool link_counter = link_counter_slot(slot, &k);
		if (link_counter && !links_due && g->link_own_have[k]) {
			v = g->link_own_val[k];
			r = g->link_own_rc[k];
			links_cached = true;
		} else {
			r = slot_call(api, h, slot, &v, &rm);
			if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
				g->fv_route[slot] = FV_NONE; /* not supported either way: stays so */
			if (link_counter) {
				g->link_own_val[k] = v;
				g->link_own_rc[k] = r;
				g->link_own_have[k] = r != NVML_ERROR_GPU_IS_LOST;
				links_read = true;
			}
		}
		nvml_put_u64(rd, want[i].dst, r, slot_value(slot, v), "NVML");
	}
	if (links_read && links_due && !rd->lost)
		g->link_own_read_ns = now_ns;
	return links_cached ? g->link_own_read_ns : 0;
}

unsigned long nvml_last_sample_calls(struct gpu_backend *be, unsigned gpu)
{
	struct nvml_priv *p = nvml_priv_of(be);
	return gpu < p->n ? p->gpu[gpu].last_sample_calls : 0;
}
