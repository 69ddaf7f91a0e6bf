/*
 * geo.c — regions of the sphere for GEOWITHIN: boxes (latitude/longitude rectangles), circles
 * (spherical caps) and polygons with holes whose edges are great-circle arcs.
 *
 * Points are unit vectors. A box compares latitudes and longitudes (wrapping at the
 * antimeridian when its west edge is east of its east edge; a pole is in a box that reaches its
 * latitude). A circle holds the points within `radius` radians of its centre (the angle between
 * the vectors). A polygon is projected gnomonically onto the plane tangent to the sphere at the
 * point found from the normalized sum of its boundary's vertices (moved until its hemisphere
 * holds every vertex): that projection maps great circles to straight
 * lines, so the geodesic polygon becomes a plane polygon exactly, and containment and the
 * checks of its rings (edges that cross, holes outside the boundary or inside each other,
 * duplicate edges) are plane geometry. It needs every vertex in the open hemisphere around that
 * centre (a polygon larger than a hemisphere is refused); a point outside that hemisphere is
 * outside the polygon.
 */
#include "query/query.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double x, y; } pt2;

struct st_geo {
    strata_geo_kind kind;
    double lat_lo, lat_hi, lng_lo, lng_hi;   /* BOX, degrees */
    double c[3], radius;                     /* CIRCLE: centre, radians; POLYGON: the tangent point */
    double e1[3], e2[3];                     /* POLYGON: the tangent plane's axes */
    pt2 *pts;                                /* POLYGON: projected vertices, ring after ring */
    size_t *starts, *lens, nrings;           /* each ring's first vertex and count (closing point dropped) */
};

static void unit(double lat, double lng, double v[3]) {
    double a = lat * M_PI / 180, b = lng * M_PI / 180;
    v[0] = cos(a) * cos(b);
    v[1] = cos(a) * sin(b);
    v[2] = sin(a);
}

static double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross(const double a[3], const double b[3], double out[3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static bool normalize(double v[3]) {
    double n = sqrt(dot(v, v));
    if (!(n > 1e-12)) return false;
    for (int i = 0; i < 3; i++) v[i] /= n;
    return true;
}

static bool valid_point(double lng, double lat) {
    return isfinite(lng) && isfinite(lat) && lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180;
}

/* The gnomonic projection of (lat, lng) on the tangent plane of g; false outside its hemisphere. */
static bool project(const st_geo *g, double lat, double lng, pt2 *out) {
    double v[3];
    unit(lat, lng, v);
    double d = dot(v, g->c);
    if (!(d > 1e-9)) return false;
    out->x = dot(v, g->e1) / d;
    out->y = dot(v, g->e2) / d;
    return true;
}

static double orient(pt2 a, pt2 b, pt2 c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

/* Do segments ab and cd cross at a point inside both (touching at an end does not count)? */
static bool segments_cross(pt2 a, pt2 b, pt2 c, pt2 d) {
    double o1 = orient(a, b, c), o2 = orient(a, b, d), o3 = orient(c, d, a), o4 = orient(c, d, b);
    return ((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0));
}

/* Is p inside ring r (even-odd rule; a point on an edge counts as inside)? */
static bool in_ring(const st_geo *g, size_t r, pt2 p) {
    const pt2 *v = g->pts + g->starts[r];
    size_t n = g->lens[r];
    bool in = false;
    for (size_t i = 0, j = n - 1; i < n; j = i++) {
        pt2 a = v[j], b = v[i];
        double o = orient(a, b, p);
        if (fabs(o) < 1e-15 && p.x >= fmin(a.x, b.x) - 1e-15 && p.x <= fmax(a.x, b.x) + 1e-15 &&
            p.y >= fmin(a.y, b.y) - 1e-15 && p.y <= fmax(a.y, b.y) + 1e-15)
            return true; /* on the edge */
        if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) in = !in;
    }
    return in;
}

void st_geo_free(st_geo *g) {
    if (!g) return;
    free(g->pts);
    free(g->starts);
    free(g->lens);
    free(g);
}

static int bad(st_geo *g, char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(st_geo *g, char *why, size_t whylen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    st_geo_free(g);
    return STRATA_ERR_INVALID_ARGUMENT;
}

static int prepare_polygon(st_geo *g, const strata_geo *in, char *why, size_t whylen) {
    if (!in->ring_ends || in->nrings == 0 || in->ring_ends[in->nrings - 1] != in->npoints)
        return bad(g, why, whylen, "a polygon needs ring_ends, the last equal to its %zu points", in->npoints);
    g->nrings = in->nrings;
    g->starts = calloc(in->nrings, sizeof *g->starts);
    g->lens = calloc(in->nrings, sizeof *g->lens);
    g->pts = calloc(in->npoints ? in->npoints : 1, sizeof *g->pts);
    if (!g->starts || !g->lens || !g->pts) return bad(g, why, whylen, "out of memory");
    /* the tangent point: the normalized sum of the boundary's distinct vertices */
    size_t boundary = in->ring_ends[0];
    double sum[3] = {0, 0, 0};
    for (size_t i = 0; i + 1 < boundary && i < in->npoints; i++) {
        double v[3];
        unit(in->points[2 * i + 1], in->points[2 * i], v);
        for (int k = 0; k < 3; k++) sum[k] += v[k];
    }
    size_t at = 0, prev = 0;
    for (size_t r = 0; r < in->nrings; r++) {
        size_t end = in->ring_ends[r];
        if (end < prev || end > in->npoints) return bad(g, why, whylen, "ring %zu ends before it starts", r);
        size_t n = end - prev;
        const double *p = in->points + 2 * prev;
        if (n < 4) return bad(g, why, whylen, "ring %zu has %zu points: a ring needs at least 3 vertices and its first point again at its end", r, n);
        for (size_t i = 0; i < n; i++)
            if (!valid_point(p[2 * i], p[2 * i + 1]))
                return bad(g, why, whylen, "ring %zu point %zu (%g, %g) is not a longitude and latitude", r, i, p[2 * i], p[2 * i + 1]);
        if (p[0] != p[2 * (n - 1)] || p[1] != p[2 * (n - 1) + 1])
            return bad(g, why, whylen, "ring %zu is not closed: its last point (%g, %g) differs from its first (%g, %g)",
                       r, p[2 * (n - 1)], p[2 * (n - 1) + 1], p[0], p[1]);
        if (r == 0) {
            /* a centre whose hemisphere holds every vertex: from their normalized sum, moved
             * towards the vertex least in front until all are (the perceptron's rule: it ends
             * whenever such a centre exists) */
            memcpy(g->c, sum, sizeof sum);
            bool found = false;
            for (int iter = 0; iter < 200000 && !found; iter++) {
                double len = sqrt(dot(g->c, g->c)), worst = 2, wv[3] = {0, 0, 0};
                for (size_t i = 0; i + 1 < n; i++) {
                    double v[3];
                    unit(p[2 * i + 1], p[2 * i], v);
                    double d = len > 0 ? dot(v, g->c) / len : -1;
                    if (d < worst) worst = d, memcpy(wv, v, sizeof v);
                }
                if (worst > 1e-6) found = true;
                else for (int k = 0; k < 3; k++) g->c[k] += wv[k];
            }
            if (!found || !normalize(g->c)) return bad(g, why, whylen, "the polygon does not lie within a hemisphere");
            double up[3] = {0, 0, 1};
            if (fabs(g->c[2]) > 0.9) up[0] = 1, up[2] = 0;
            cross(up, g->c, g->e1);
            normalize(g->e1);
            cross(g->c, g->e1, g->e2);
        }
        g->starts[r] = at;
        g->lens[r] = n - 1;
        for (size_t i = 0; i + 1 < n; i++)
            if (!project(g, p[2 * i + 1], p[2 * i], &g->pts[at + i]))
                return bad(g, why, whylen, "ring %zu point %zu (%g, %g) is over a hemisphere away from the polygon's centre: polygons must lie within a hemisphere",
                           r, i, p[2 * i], p[2 * i + 1]);
        at += n - 1;
        prev = end;
    }
    /* rings: edges that cross, within a ring and between rings; duplicate edges */
    for (size_t r = 0; r < g->nrings; r++) {
        const pt2 *v = g->pts + g->starts[r];
        size_t n = g->lens[r];
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++) {
                if (j == i + 1 || (i == 0 && j == n - 1)) continue; /* neighbours share a vertex */
                if (segments_cross(v[i], v[(i + 1) % n], v[j], v[(j + 1) % n]))
                    return bad(g, why, whylen, "ring %zu is not valid: edges %zu and %zu cross", r, i, j);
            }
        double area = 0;
        for (size_t i = 0; i < n; i++) area += orient((pt2){0, 0}, v[i], v[(i + 1) % n]);
        if (fabs(area) < 1e-18) return bad(g, why, whylen, "ring %zu encloses no area", r);
    }
    for (size_t r = 1; r < g->nrings; r++) {
        const pt2 *h = g->pts + g->starts[r];
        for (size_t s = 0; s < r; s++) {
            const pt2 *o = g->pts + g->starts[s];
            for (size_t i = 0; i < g->lens[r]; i++)
                for (size_t j = 0; j < g->lens[s]; j++) {
                    pt2 a = h[i], b = h[(i + 1) % g->lens[r]], c = o[j], d = o[(j + 1) % g->lens[s]];
                    bool same = (a.x == c.x && a.y == c.y && b.x == d.x && b.y == d.y) ||
                                (a.x == d.x && a.y == d.y && b.x == c.x && b.y == c.y);
                    if (same) return bad(g, why, whylen, "duplicate edge: ring %zu, edge %zu and ring %zu, edge %zu", r, i, s, j);
                    if (segments_cross(a, b, c, d))
                        return bad(g, why, whylen, "ring %zu crosses ring %zu (its edge %zu and edge %zu)", r, s, i, j);
                }
        }
        for (size_t i = 0; i < g->lens[r]; i++)
            if (!in_ring(g, 0, h[i]))
                return bad(g, why, whylen, "ring %zu is not inside the first ring: holes must lie in the boundary", r);
        for (size_t s = 1; s < r; s++)
            if (in_ring(g, s, h[0]) || in_ring(g, r, (g->pts + g->starts[s])[0]))
                return bad(g, why, whylen, "rings %zu and %zu are nested: a hole cannot hold another", s, r);
    }
    return STRATA_OK;
}

int st_geo_prepare(const strata_geo *in, st_geo **out, char *why, size_t whylen) {
    st_geo *g = calloc(1, sizeof *g);
    if (!g) return bad(g, why, whylen, "out of memory");
    g->kind = in->kind;
    if (!in->points && in->npoints) return bad(g, why, whylen, "points is NULL");
    switch (in->kind) {
    case STRATA_GEO_BOX: {
        if (in->npoints != 2) return bad(g, why, whylen, "a box has 2 points, not %zu", in->npoints);
        const double *p = in->points;
        if (!valid_point(p[0], p[1]) || !valid_point(p[2], p[3]))
            return bad(g, why, whylen, "a box's corners (%g, %g) and (%g, %g) are not longitudes and latitudes", p[0], p[1], p[2], p[3]);
        if (p[1] > p[3]) return bad(g, why, whylen, "a box's south-west corner (latitude %g) is north of its north-east one (%g)", p[1], p[3]);
        g->lng_lo = p[0], g->lat_lo = p[1], g->lng_hi = p[2], g->lat_hi = p[3];
        break;
    }
    case STRATA_GEO_CIRCLE:
        if (in->npoints != 1) return bad(g, why, whylen, "a circle has 1 point (its centre), not %zu", in->npoints);
        if (!valid_point(in->points[0], in->points[1]))
            return bad(g, why, whylen, "a circle's centre (%g, %g) is not a longitude and latitude", in->points[0], in->points[1]);
        if (!(in->radius >= 0)) return bad(g, why, whylen, "a circle's radius (%g) must be 0 or more radians", in->radius);
        unit(in->points[1], in->points[0], g->c);
        g->radius = in->radius;
        break;
    case STRATA_GEO_POLYGON: {
        int rc = prepare_polygon(g, in, why, whylen);
        if (rc) return rc; /* g freed */
        break;
    }
    default:
        return bad(g, why, whylen, "unknown region kind %d", (int)in->kind);
    }
    *out = g;
    return STRATA_OK;
}

bool st_geo_contains(const st_geo *g, double lng, double lat) {
    if (!valid_point(lng, lat)) return false;
    switch (g->kind) {
    case STRATA_GEO_BOX:
        if (lat < g->lat_lo || lat > g->lat_hi) return false;
        if (lat == 90 || lat == -90) return true; /* every longitude meets at a pole */
        if (g->lng_lo <= g->lng_hi) return lng >= g->lng_lo && lng <= g->lng_hi;
        return lng >= g->lng_lo || lng <= g->lng_hi; /* across the antimeridian */
    case STRATA_GEO_CIRCLE: {
        double v[3], x[3];
        unit(lat, lng, v);
        cross(g->c, v, x);
        return atan2(sqrt(dot(x, x)), dot(g->c, v)) <= g->radius + 1e-12;
    }
    case STRATA_GEO_POLYGON: {
        pt2 p;
        if (!project(g, lat, lng, &p) || !in_ring(g, 0, p)) return false;
        for (size_t r = 1; r < g->nrings; r++)
            if (in_ring(g, r, p)) {
                /* on a hole's edge is on the polygon's boundary: inside */
                const pt2 *v = g->pts + g->starts[r];
                size_t n = g->lens[r];
                for (size_t i = 0, j = n - 1; i < n; j = i++)
                    if (fabs(orient(v[j], v[i], p)) < 1e-15) return true;
                return false;
            }
        return true;
    }
    }
    return false;
}
