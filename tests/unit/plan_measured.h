/* SPDX-License-Identifier: Apache-2.0 */
/* plan_measured.h - reading the measured cases in the planner's tests: a field that must be
 * there (the test fails when a measurement file lacks it). Include after cmocka.h and jansson.h. */
#ifndef GPUCTL_TEST_PLAN_MEASURED_H
#define GPUCTL_TEST_PLAN_MEASURED_H

static inline double num(json_t *c, const char *k)
{
	json_t *v = json_object_get(c, k);
	assert_non_null(v);
	return json_number_value(v);
}

static inline const char *str(json_t *c, const char *k)
{
	const char *s = json_string_value(json_object_get(c, k));
	assert_non_null(s);
	return s;
}

#endif
