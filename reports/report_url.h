/* report_url.h - a target URL as reports may show it: credentials that can
 * ride in a URL (userinfo, query and fragment values) replaced by "***".
 * API keys travel in the Authorization header, never in the URL; this is for
 * the URL a user typed with a secret in it anyway. */
#ifndef PS_REPORT_URL_H
#define PS_REPORT_URL_H

#include "core/buf.h"

/* Appends url to out with "user:pass@" as "***@", every query parameter's
 * value (or a bare parameter) as "***" and a non-empty fragment as "***".
 * NULL appends nothing. */
void ps_report_url_redacted(ps_buf *out, const char *url);

#endif
