@_exported import struct RealmStorage.Decimal128
@_exported import struct RealmStorage.Decimal128ParseError
