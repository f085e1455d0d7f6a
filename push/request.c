/* What each server is sent (docs/push.md, "What is sent").
 *
 * Pyroscope: POST BASE/ingest with the query its ingest handler reads
 * (pkg/ingester/pyroscope/ingest_handler.go: name parsed by
 * api/model/labelset, from and until by pkg/og/util/attime, format=pprof
 * takes the body as it is, gzip'd or not) and the gzip'd pprof as the body.
 *
 * Parca: POST BASE/api/profiles/writeraw, grpc-gateway's JSON of
 * WriteRawRequest (proto/parca/profilestore/v1alpha1/profilestore.proto):
 * field names in lowerCamelCase, bytes as standard base64; the series'
 * __name__ label is the profile's name (pkg/normalizer/normalizer.go). */
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "push/pushP.h"
#include "util/xalloc.h"

/* pprof's cpu sample type: the name Pyroscope gives it (metricName in
 * pkg/og/convert/pprof/profile.go) and the one Parca's agent sends */
#define PROFILE_NAME "process_cpu"

static void append(char **s, size_t *len, size_t *cap, const char *add)
{
	size_t n = strlen(add);

	kp_xgrow(s, cap, *len + n + 1, 1);
	memcpy(*s + *len, add, n + 1);
	*len += n;
}

static void append_escaped(char **s, size_t *len, size_t *cap, const char *raw)
{
	char *e = curl_easy_escape(NULL, raw, 0);

	if (!e)
		kp_oom(0);
	append(s, len, cap, e);
	curl_free(e);
}

char *kp_request_pyroscope_url(const char *base, const char *service, const struct kp_label *l,
			       size_t nl, uint64_t from_ns, uint64_t until_ns)
{
	size_t len = 0, cap = 0, klen = 0, kcap = 0;
	char *s = NULL, *key = NULL, tail[128];

	/* SERVICE{name=value,...}: Pyroscope's key, escaped as one query value */
	append(&key, &klen, &kcap, service);
	append(&key, &klen, &kcap, "{");
	for (size_t i = 0; i < nl; i++) {
		if (i)
			append(&key, &klen, &kcap, ",");
		append(&key, &klen, &kcap, l[i].name);
		append(&key, &klen, &kcap, "=");
		append(&key, &klen, &kcap, l[i].value);
	}
	append(&key, &klen, &kcap, "}");
	append(&s, &len, &cap, base);
	append(&s, &len, &cap, "/ingest?name=");
	append_escaped(&s, &len, &cap, key);
	free(key);
	/* Unix seconds, rounded down both: window k+1's from is window k's
	 * until; the pprof's time_nanos and duration_nanos hold the exact span */
	snprintf(tail, sizeof(tail), "&from=%llu&until=%llu&format=pprof&spyName=kprof",
		 (unsigned long long)(from_ns / 1000000000u),
		 (unsigned long long)(until_ns / 1000000000u));
	append(&s, &len, &cap, tail);
	return s;
}

static json_t *label(const char *name, const char *value)
{
	return json_pack("{s:s, s:s}", "name", name, "value", value);
}

char *kp_request_parca_body(const char *service, const struct kp_label *l, size_t nl,
			    const uint8_t *gz, size_t gzlen, size_t *len)
{
	json_t *labels = json_array(), *root;
	size_t b64cap = 4 * ((gzlen + 2) / 3) + 1;
	unsigned char *b64 = kp_xmalloc(b64cap);
	int b64len;
	char *body;

	/* EVP_EncodeBlock takes an int length: a window is far below 1.5 GiB
	 * (kp_push_window's bound) */
	b64len = EVP_EncodeBlock(b64, gz, (int)gzlen);
	json_array_append_new(labels, label("__name__", PROFILE_NAME));
	json_array_append_new(labels, label("service_name", service));
	for (size_t i = 0; i < nl; i++)
		json_array_append_new(labels, label(l[i].name, l[i].value));
	root = json_pack("{s:[{s:{s:o}, s:[{s:s%}]}], s:b}", "series", "labels", "labels", labels,
			 "samples", "rawProfile", (const char *)b64,
			 (size_t)(b64len > 0 ? b64len : 0), "normalized", 1);
	free(b64);
	if (!root)
		kp_oom(0);
	body = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!body)
		kp_oom(0);
	*len = strlen(body);
	return body;
}
