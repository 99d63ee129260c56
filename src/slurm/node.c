/* SPDX-License-Identifier: Apache-2.0 */
/* node.c - drain reasons, `scontrol show node -o` and the health check's decision (node.h). */
#include "slurm/node.h"

#include <stdio.h>
#include <string.h>

#include "health/health.h"

static void append(char *out, size_t outlen, const char *s)
{
	size_t n = strlen(out);
	if (n + 1 < outlen)
		snprintf(out + n, outlen - n, "%s", s);
}

void slurm_finding_words(const char *rule_id, const char *reason, char *out, size_t outlen)
{
	if (!outlen)
		return;
	unsigned long long code;
	int at = 0;
	const char *colon = reason ? strstr(reason, ": ") : NULL;
	/* the XID rule's "XID 79 GPU_HAS_FALLEN_OFF_THE_BUS: GPU has fallen off the bus" */
	if (colon && sscanf(reason, "XID %llu%n", &code, &at) == 1 && at > 0)
		snprintf(out, outlen, "XID %llu: %s", code, colon + 2);
	else
		snprintf(out, outlen, "%s", reason && reason[0] ? reason : rule_id ? rule_id : "?");
}

/* Appends "; GPU 2 words, words" (the first without "; ") for an entity that fails. */
static void entity_reasons(const struct health_entity *e, const char *who, char *out, size_t outlen, bool *any)
{
	if (e->verdict != HEALTH_FAIL)
		return;
	char part[HEALTH_TEXT_LEN + 48], words[HEALTH_TEXT_LEN];
	bool named = false;
	for (unsigned k = 0; k < e->nfind; k++) {
		if (e->find[k].verdict != HEALTH_FAIL)
			continue;
		slurm_finding_words(e->find[k].rule_id, e->find[k].reason, words, sizeof(words));
		if (named)
			snprintf(part, sizeof(part), ", %s", words);
		else
			snprintf(part, sizeof(part), "%s%s %s", *any ? "; " : " ", who, words);
		append(out, outlen, part);
		named = true;
		*any = true;
	}
	if (!named) {
		snprintf(part, sizeof(part), "%s%s failed", *any ? "; " : " ", who);
		append(out, outlen, part);
		*any = true;
	}
}

bool slurm_drain_reason(const struct health_report *rep, uint64_t mask, char *out, size_t outlen)
{
	if (!outlen)
		return false;
	out[0] = '\0';
	snprintf(out, outlen, "%s", SLURM_REASON_PREFIX);
	bool any = false;
	entity_reasons(&rep->system, "system", out, outlen, &any);
	for (unsigned i = 0; i < rep->n && i < 64; i++) {
		if (!(mask >> i & 1))
			continue;
		char who[16];
		snprintf(who, sizeof(who), "GPU %u", i);
		entity_reasons(&rep->gpu[i], who, out, outlen, &any);
	}
	if (!any) {
		out[0] = '\0';
		return false;
	}
	slurm_reason_clean(out);
	return true;
}

void slurm_reason_clean(char *reason)
{
	for (char *p = reason; *p; p++)
		if (*p == '"' || *p == '\n' || *p == '\\')
			*p = '\'';
}

/* The value of " KEY=" in line up to the next space, or NULL. */
static const char *field(const char *line, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
		if (p != line && p[-1] != ' ')
			continue;
		p += kl;
		size_t n = strcspn(p, " \n");
		if (n >= outlen)
			n = outlen - 1;
		memcpy(out, p, n);
		out[n] = '\0';
		return out;
	}
	return NULL;
}

int slurm_node_parse(const char *line, struct slurm_node_info *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!field(line, "NodeName=", out->name, sizeof(out->name)) || !out->name[0]) {
		snprintf(err, errlen, "no NodeName= in scontrol's output");
		return -1;
	}
	if (!field(line, "State=", out->state, sizeof(out->state)) || !out->state[0]) {
		snprintf(err, errlen, "no State= in scontrol's output for node '%s'", out->name);
		return -1;
	}
	out->drain = strstr(out->state, "DRAIN") != NULL;
	/* Reason runs to " [user@time]" (the value holds spaces) */
	const char *r = strstr(line, " Reason=");
	if (r) {
		r += strlen(" Reason=");
		const char *end = strstr(r, " [");
		size_t n = end ? (size_t)(end - r) : strcspn(r, "\n");
		if (n >= sizeof(out->reason))
			n = sizeof(out->reason) - 1;
		memcpy(out->reason, r, n);
		out->reason[n] = '\0';
		if (strcmp(out->reason, "(null)") == 0)
			out->reason[0] = '\0';
	}
	return 0;
}

static bool ours(const char *reason)
{
	return strncmp(reason, SLURM_REASON_PREFIX, strlen(SLURM_REASON_PREFIX)) == 0;
}

enum slurm_hc_action slurm_health_decide(bool fail, const char *reason, const struct slurm_node_info *node)
{
	if (fail) {
		if (!node->drain)
			return SLURM_HC_DRAIN;
		if (!ours(node->reason))
			return SLURM_HC_KEEP_OTHERS;
		return strcmp(node->reason, reason ? reason : "") == 0 ? SLURM_HC_NONE : SLURM_HC_DRAIN;
	}
	return node->drain && ours(node->reason) ? SLURM_HC_RESUME : SLURM_HC_NONE;
}

const char *slurm_hc_action_name(enum slurm_hc_action a)
{
	switch (a) {
	case SLURM_HC_DRAIN: return "drain";
	case SLURM_HC_RESUME: return "resume";
	case SLURM_HC_KEEP_OTHERS: return "keep";
	default: return "none";
	}
}
