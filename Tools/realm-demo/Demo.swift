import RealmStorage
@main struct Demo { static func main() throws {} }
