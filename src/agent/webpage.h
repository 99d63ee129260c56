/* SPDX-License-Identifier: Apache-2.0 */
/*
 * webpage.h - the agent's web page (web/index.html, app.js, app.css), compiled
 * into the binary by cmake/webpage.cmake; served at /, /app.js and /app.css
 * (docs/agent.md "The web page"). Each array has a NUL after its len bytes.
 */
#ifndef GPUCTL_WEBPAGE_H
#define GPUCTL_WEBPAGE_H

#include <stddef.h>

extern const unsigned char webpage_index_html[], webpage_app_js[], webpage_app_css[];
extern const size_t webpage_index_html_len, webpage_app_js_len, webpage_app_css_len;

/* The page's Content-Security-Policy: its own script and style only, JSON
 * from its own origin, nothing framed, no forms. */
#define WEBPAGE_CSP                                                                                              \
	"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "   \
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

#endif
