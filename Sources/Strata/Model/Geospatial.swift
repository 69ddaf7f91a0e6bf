import CCore
import Foundation

// RealmSwift's geospatial types: points, and the regions a query's `geoWithin` (or `IN %@` in a
// predicate string) asks about — boxes, circles and polygons — with distances in radians,
// kilometers, miles or degrees. The core evaluates the regions (CCore/src/query/geo.c): points
// are embedded objects with `type` "Point" and `coordinates` [longitude, latitude], as GeoJSON
// and RealmSwift store them:
//
//     class Location: EmbeddedObject {
//         @Persisted private(set) var coordinates: List<Double>
//         @Persisted var type = "Point"
//     }
//     realm.objects(Shop.self).where { $0.location.geoWithin(GeoCircle(center: (55.67, 12.56), radius: .kilometers(10)!)!) }

/// A region a geospatial query asks about (``GeoBox``, ``GeoCircle``, ``GeoPolygon``).
public protocol RLMGeospatial {
    /// The region as the core takes it: `body` gets a `strata_geo` whose memory lives during the call.
    func _strataWithGeo<R>(_ body: (UnsafePointer<strata_geo>) throws -> R) rethrows -> R
}

/// A point on the globe: latitude (-90…90) and longitude (-180…180) in degrees, and an altitude
/// (0 or more; not used by queries).
public struct GeoPoint: Equatable, Hashable, Sendable {
    /// Degrees north (negative: south), -90…90.
    public let latitude: Double
    /// Degrees east (negative: west), -180…180.
    public let longitude: Double
    /// Meters above the surface, 0 or more.
    public let altitude: Double

    /// A point, or nil when a coordinate is out of range or not a number, or the altitude negative.
    public init?(latitude: Double, longitude: Double, altitude: Double = 0) {
        guard latitude >= -90 && latitude <= 90, longitude >= -180 && longitude <= 180,
              altitude >= 0 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }
}

/// A rectangle of latitudes and longitudes: from its south-west corner to its north-east one
/// (eastwards, across the antimeridian when the west edge is east of the east edge).
public struct GeoBox: RLMGeospatial, Equatable, Hashable, Sendable {
    /// The south-west corner.
    public let bottomLeft: GeoPoint
    /// The north-east corner.
    public let topRight: GeoPoint

    /// A box between two corners.
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// A box between two (latitude, longitude) corners, or nil when one is not a valid point.
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let bl = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
              let tr = GeoPoint(latitude: topRight.0, longitude: topRight.1) else { return nil }
        self.init(bottomLeft: bl, topRight: tr)
    }

    /// The region as the core takes it.
    public func _strataWithGeo<R>(_ body: (UnsafePointer<strata_geo>) throws -> R) rethrows -> R {
        let points = [bottomLeft.longitude, bottomLeft.latitude, topRight.longitude, topRight.latitude]
        return try points.withUnsafeBufferPointer { p in
            var g = strata_geo()
            g.kind = STRATA_GEO_BOX
            g.points = p.baseAddress
            g.npoints = 2
            return try body(&g)
        }
    }
}

/// A distance along the globe, kept in radians (the angle at the Earth's centre). The Earth's
/// radius is taken as 6,378.1 km (3,963.2 miles), as RealmSwift takes it.
public struct Distance: Equatable, Hashable, Sendable {
    static let earthRadiusKilometers = 6378.1
    static let earthRadiusMiles = 3963.2

    /// The angle in radians.
    public let radians: Double

    private init(_ radians: Double) { self.radians = radians }

    /// A distance in radians, or nil when negative or not a number.
    public static func radians(_ value: Double) -> Distance? { value >= 0 ? Distance(value) : nil }
    /// A distance in degrees, or nil when negative or not a number.
    public static func degrees(_ value: Double) -> Distance? { value >= 0 ? Distance(value * .pi / 180) : nil }
    /// A distance in kilometers, or nil when negative or not a number.
    public static func kilometers(_ value: Double) -> Distance? {
        value >= 0 ? Distance(value / earthRadiusKilometers) : nil
    }
    /// A distance in miles, or nil when negative or not a number.
    public static func miles(_ value: Double) -> Distance? { value >= 0 ? Distance(value / earthRadiusMiles) : nil }

    /// The distance in degrees.
    public func asDegrees() -> Double { radians * 180 / .pi }
    /// The distance in kilometers.
    public func asKilometers() -> Double { radians * Distance.earthRadiusKilometers }
    /// The distance in miles.
    public func asMiles() -> Double { radians * Distance.earthRadiusMiles }
}

/// The points within a distance of a centre, along the globe.
public struct GeoCircle: RLMGeospatial, Equatable, Hashable, Sendable {
    /// The centre.
    public let center: GeoPoint
    /// The radius in radians.
    public let radiusInRadians: Double

    /// A circle of `radiusInRadians` (0 or more) around `center`, or nil for a negative or NaN radius.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard radiusInRadians >= 0 else { return nil }
        self.center = center
        self.radiusInRadians = radiusInRadians
    }

    /// A circle of `radius` around `center`.
    public init(center: GeoPoint, radius: Distance) {
        self.center = center
        radiusInRadians = radius.radians
    }

    /// A circle around a (latitude, longitude) centre, or nil when it is not a point or the radius is negative.
    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let c = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: c, radiusInRadians: radiusInRadians)
    }

    /// A circle of `radius` around a (latitude, longitude) centre, or nil when it is not a point.
    public init?(center: (Double, Double), radius: Distance) {
        guard let c = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: c, radius: radius)
    }

    /// The region as the core takes it.
    public func _strataWithGeo<R>(_ body: (UnsafePointer<strata_geo>) throws -> R) rethrows -> R {
        let points = [center.longitude, center.latitude]
        return try points.withUnsafeBufferPointer { p in
            var g = strata_geo()
            g.kind = STRATA_GEO_CIRCLE
            g.points = p.baseAddress
            g.npoints = 1
            g.radius = radiusInRadians
            return try body(&g)
        }
    }
}

/// A polygon whose edges follow great circles: an outer ring and holes in it. Each ring is
/// closed (its last point is its first) and has at least 3 vertices (4 points). Whether rings
/// cross or holes lie outside is checked when a query runs (it fails naming the ring).
public struct GeoPolygon: RLMGeospatial, Equatable, Hashable, Sendable {
    /// The boundary.
    public let outerRing: [GeoPoint]
    /// The holes.
    public let holes: [[GeoPoint]]

    /// A polygon, or nil when a ring has fewer than 4 points or is not closed.
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) {
        for ring in [outerRing] + holes {
            guard ring.count >= 4, ring.first == ring.last else { return nil }
        }
        self.outerRing = outerRing
        self.holes = holes
    }

    /// A polygon of (latitude, longitude) rings, or nil when a point is invalid or a ring is not one.
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint]? {
            let p = ring.compactMap { GeoPoint(latitude: $0.0, longitude: $0.1) }
            return p.count == ring.count ? p : nil
        }
        guard let outer = points(outerRing) else { return nil }
        var hs: [[GeoPoint]] = []
        for h in holes {
            guard let p = points(h) else { return nil }
            hs.append(p)
        }
        self.init(outerRing: outer, holes: hs)
    }

    /// A polygon with holes given one after another.
    public init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    /// The region as the core takes it.
    public func _strataWithGeo<R>(_ body: (UnsafePointer<strata_geo>) throws -> R) rethrows -> R {
        var points: [Double] = []
        var ends: [Int] = []
        for ring in [outerRing] + holes {
            for p in ring { points += [p.longitude, p.latitude] }
            ends.append(points.count / 2)
        }
        return try points.withUnsafeBufferPointer { p in
            try ends.withUnsafeBufferPointer { e in
                var g = strata_geo()
                g.kind = STRATA_GEO_POLYGON
                g.points = p.baseAddress
                g.npoints = points.count / 2
                g.ring_ends = e.baseAddress
                g.nrings = ends.count
                return try body(&g)
            }
        }
    }
}
