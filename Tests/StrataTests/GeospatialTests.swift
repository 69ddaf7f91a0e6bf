import Foundation
import Testing
@_spi(StrataCore) @testable import Strata

final class GeoLocation: EmbeddedObject {
    @Persisted private(set) var coordinates: List<Double>
    @Persisted var type = "Point"

    convenience init(_ latitude: Double, _ longitude: Double) {
        self.init()
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

final class GeoPerson: Object {
    @Persisted var name = ""
    @Persisted var location: GeoLocation?

    convenience init(_ name: String, _ location: GeoLocation?) {
        self.init()
        self.name = name
        self.location = location
    }
}

/// Geospatial queries (RealmSwift's types, evaluated by the core): the same places through the
/// typed `geoWithin` and the predicate string `IN %@`, the antimeridian and the poles.
@Suite("Geospatial: boxes, circles and polygons over embedded points")
struct GeospatialTests {
    static func realm(_ dir: TempDir) throws -> Realm {
        let realm = try Realm(configuration: config(dir, types: [GeoPerson.self, GeoLocation.self]))
        try realm.write {
            realm.add(GeoPerson("Diana", GeoLocation(40.7128, -74.0060)))
            realm.add(GeoPerson("Maria", GeoLocation(55.6761, 12.5683)))
            realm.add(GeoPerson("Tomas", GeoLocation(55.6280, 12.0826)))
            realm.add(GeoPerson("Alba", GeoLocation(-76, -76)))
            realm.add(GeoPerson("Fiji", GeoLocation(-17.7, 179.5)))
            realm.add(GeoPerson("Samoa", GeoLocation(-13.8, -171.8)))
            realm.add(GeoPerson("North", GeoLocation(90, 0)))
            realm.add(GeoPerson("Manuela", nil))
        }
        return realm
    }

    static func names<R: RLMGeospatial>(_ realm: Realm, _ shape: R) -> [String] {
        let typed = realm.objects(GeoPerson.self).where { $0.location.geoWithin(shape) }.map(\.name).sorted()
        let text = realm.objects(GeoPerson.self).filter("location IN %@", shape).map(\.name).sorted()
        #expect(typed == text, "the typed query and the predicate string agree")
        return typed
    }

    @Test func valuesAndDistances() {
        #expect(GeoPoint(latitude: 90, longitude: 180) != nil)
        #expect(GeoPoint(latitude: 90.000001, longitude: 0) == nil)
        #expect(GeoPoint(latitude: .nan, longitude: 0) == nil)
        #expect(GeoPoint(latitude: 0, longitude: 0, altitude: -1) == nil)
        #expect(GeoBox(bottomLeft: (-91, 0), topRight: (0, 0)) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0)]) == nil)          // not closed
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (0, 0)]) == nil)          // too few points
        #expect(GeoPolygon(outerRing: [(0, 0), (1, 1), (2, 0), (0, 0)]) != nil)
        #expect(GeoCircle(center: (0, 0), radiusInRadians: -1) == nil)
        #expect(Distance.kilometers(-1) == nil && Distance.miles(.nan) == nil)
        #expect(abs(Distance.kilometers(40075)!.radians - 2 * .pi) < 2 * .pi * 0.0001)
        #expect(abs(Distance.miles(24901)!.radians - 2 * .pi) < 2 * .pi * 0.0001)
        #expect(abs(Distance.degrees(180)!.radians - .pi) < 1e-12)
        #expect(abs(Distance.radians(1)!.asKilometers() - 6378.1) < 1e-9)
    }

    @Test func shapesFindThePlacesInThem() throws {
        let dir = TempDir()
        let realm = try Self.realm(dir)
        #expect(Self.names(realm, GeoBox(bottomLeft: (55.6281, 12.0826), topRight: (55.6762, 12.5684))!) == ["Maria"])
        #expect(Self.names(realm, GeoBox(bottomLeft: (0, -75), topRight: (60, 15))!) == ["Diana", "Maria", "Tomas"])
        // across the antimeridian: from 170°E eastwards to 170°W
        #expect(Self.names(realm, GeoBox(bottomLeft: (-20, 170), topRight: (-10, -170))!) == ["Fiji", "Samoa"])
        #expect(Self.names(realm, GeoCircle(center: (55.67, 12.56), radius: .kilometers(10)!)!) == ["Maria"])
        #expect(Self.names(realm, GeoCircle(center: (55.67, 12.56), radius: .kilometers(100)!)!) == ["Maria", "Tomas"])
        #expect(Self.names(realm, GeoCircle(center: (45, -20), radius: .kilometers(5000)!)!) == ["Diana", "Maria", "Tomas"])
        // the pole: every longitude meets there
        #expect(Self.names(realm, GeoCircle(center: (89, 120), radius: .degrees(2)!)!) == ["North"])
        #expect(Self.names(realm, GeoBox(bottomLeft: (80, 10), topRight: (90, 20))!) == ["North"])
        #expect(Self.names(realm, GeoPolygon(outerRing: [(55.6281, 12.0826), (55.6761, 12.0826), (55.6761, 12.5684),
                                                         (55.6281, 12.5684), (55.6281, 12.0826)])!) == ["Maria"])
        // a polygon with a hole around Diana
        #expect(Self.names(realm, GeoPolygon(outerRing: [(50, -80), (62, 22), (22, 22), (-80, -80), (50, -80)],
                                             holes: [[(40.7129, -75), (40.7129, -74), (40.7126, -74), (40.7129, -75)]])!)
                == ["Alba", "Maria", "Tomas"])
        // a polygon across the antimeridian
        #expect(Self.names(realm, GeoPolygon(outerRing: [(-20, 170), (-20, -170), (-10, -170), (-10, 170), (-20, 170)])!)
                == ["Fiji", "Samoa"])
        // combined with other conditions, and live
        let near = realm.objects(GeoPerson.self).where {
            $0.location.geoWithin(GeoCircle(center: (55.67, 12.56), radius: .kilometers(100)!)!) && $0.name.starts(with: "T")
        }
        #expect(near.map(\.name) == ["Tomas"])
        try realm.write { realm.add(GeoPerson("Tina", GeoLocation(55.7, 12.6))) }
        #expect(near.map(\.name).sorted() == ["Tina", "Tomas"])
        // a point whose type is not "Point" is in no region
        try realm.write { for p in realm.objects(GeoPerson.self) { p.location?.type = "Polygon" } }
        #expect(Self.names(realm, GeoBox(bottomLeft: (-90, -180), topRight: (90, 180))!) == [])
    }
}
