/* SPDX-License-Identifier: Apache-2.0 */
/* test_nic_class.c - nic_path_class(): PIX/PXB/PHB/NODE/SYS from two PCI paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "device/nic.h"

/* One PCIe switch under root port 15:01.0: upstream port 16:00.0, downstream
 * ports 17:00.0 (GPU 18:00.0), 17:01.0 (NIC 19:00.0, two functions). */
#define SW "pci0000:15/0000:15:01.0/0000:16:00.0"
static const char gpu[] = SW "/0000:17:00.0/0000:18:00.0";
static const char nic[] = SW "/0000:17:01.0/0000:19:00.0";
static const char nic_fn1[] = SW "/0000:17:01.0/0000:19:00.1";
/* a second switch below the first one's downstream port 17:02.0 */
static const char deep[] = SW "/0000:17:02.0/0000:1a:00.0/0000:1b:00.0/0000:1c:00.0";
/* the same root complex, another root port */
static const char other_port[] = "pci0000:15/0000:15:02.0/0000:20:00.0";
/* another root complex */
static const char other_rc[] = "pci0000:9a/0000:9a:01.0/0000:9b:00.0";

static void test_same_switch_is_pix(void **state)
{
	(void)state;
	assert_int_equal(nic_path_class(gpu, 0, nic, 0), LINK_PIX);
	assert_int_equal(nic_path_class(nic, 0, gpu, 0), LINK_PIX);
	/* two functions of one card share their bridge */
	assert_int_equal(nic_path_class(nic, 0, nic_fn1, 0), LINK_PIX);
	/* what comes before the root complex does not count */
	assert_int_equal(nic_path_class("/sys/devices/" SW "/0000:17:00.0/0000:18:00.0", 0, nic, 0), LINK_PIX);
}

static void test_two_switches_is_pxb(void **state)
{
	(void)state;
	assert_int_equal(nic_path_class(gpu, 0, deep, 0), LINK_PXB);
	assert_int_equal(nic_path_class(deep, 0, nic, 0), LINK_PXB);
}

static void test_host_bridge_is_phb(void **state)
{
	(void)state;
	assert_int_equal(nic_path_class(gpu, 0, other_port, 0), LINK_PHB);
	assert_int_equal(nic_path_class(other_port, 0, deep, 0), LINK_PHB);
}

static void test_root_complexes_node_or_sys(void **state)
{
	(void)state;
	assert_int_equal(nic_path_class(gpu, 0, other_rc, 0), LINK_NODE);
	assert_int_equal(nic_path_class(gpu, 0, other_rc, 1), LINK_SYS);
	assert_int_equal(nic_path_class(gpu, -1, other_rc, -1), LINK_NODE); /* no NUMA: one node */
	assert_int_equal(nic_path_class(gpu, -1, other_rc, 1), LINK_SYS);
}

static void test_unreadable_is_unknown(void **state)
{
	(void)state;
	assert_int_equal(nic_path_class("", 0, nic, 0), LINK_UNKNOWN);
	assert_int_equal(nic_path_class(NULL, 0, nic, 0), LINK_UNKNOWN);
	assert_int_equal(nic_path_class("0000:18:00.0", 0, nic, 0), LINK_UNKNOWN); /* no root complex */
	assert_int_equal(nic_path_class("pci0000:15", 0, nic, 0), LINK_UNKNOWN);   /* no device */
	assert_int_equal(nic_path_class(gpu, 0, "/sys/devices/virtual/net/lo", 0), LINK_UNKNOWN);
	/* deeper than any real tree */
	char p[32 * 14 + 16] = "pci0000:15";
	for (int i = 0; i < 32; i++)
		strcat(p, "/0000:17:00.0");
	assert_int_equal(nic_path_class(p, 0, nic, 0), LINK_UNKNOWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_switch_is_pix),
		cmocka_unit_test(test_two_switches_is_pxb),
		cmocka_unit_test(test_host_bridge_is_phb),
		cmocka_unit_test(test_root_complexes_node_or_sys),
		cmocka_unit_test(test_unreadable_is_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
