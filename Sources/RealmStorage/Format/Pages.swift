/// One page of a paged row-group list or index directory (format 4, Spec/FORMAT.md §5.4 and §5.7):
/// how many entries (row groups or index chunks) it holds and the block holding them.
package struct Page: Sendable, Equatable {
    package var count: Int
    package var block: BlockRef
}

/// Paging of a table's row-group list and of its index directories, so a commit to a large table
/// rewrites the page it changed and a small top block instead of the whole list (format 4).
enum Pages {
    /// Entries per page as the reference writer pages them; a list or directory of at most this
    /// many entries is written unpaged.
    static let size = 16
    /// The most entries a reader accepts in one page.
    static let maximumCount = 1 << 20

    /// Where the reference writer ends the page that starts at item `start` of `count` items: pages
    /// of ``size``, then the rest in pages of its binary digits, largest first. Appending an item,
    /// or changing the last one, then rewrites a page of about the rest's lowest set bit instead of
    /// a whole last page of up to ``size`` (a one-object commit to a large table writes a few
    /// entries, not 32).
    static func pageEnd(start: Int, count: Int) -> Int {
        precondition(start >= 0 && start < count)
        if start + size <= count - count % size { return start + size }
        let rest = count - start
        return start + 1 << (Int.bitWidth - 1 - rest.leadingZeroBitCount)
    }

    /// Writes `items` (row-group entries or index chunks) as a list or directory: one block (by
    /// `block`, with `whole` true) when `paged` is false or they fit one page, else pages cut as
    /// ``pageEnd(start:count:)`` says (by `block`) under a page table (by `table`). A page at the same position of
    /// `base`, with the same start and items, is kept, block and all; the first `unchanged` items
    /// are known to be the base's and are not compared.
    /// - Returns: the top block and the blocks of base pages not kept.
    static func write<T: Equatable>(
        _ items: [T], paged: Bool, base: (items: [T], pages: [Page])?, unchanged: Int = 0,
        block: (_ items: ArraySlice<T>, _ whole: Bool) throws -> BlockRef, table: ([Page]) throws -> BlockRef
    ) rethrows -> (top: BlockRef, dropped: [BlockRef]) {
        guard paged, items.count > size else { return (try block(items[...], true), base?.pages.map(\.block) ?? []) }
        var pages: [Page] = []
        pages.reserveCapacity(items.count / size + (items.count % size).nonzeroBitCount)
        var kept = filledArray(false, count: base?.pages.count ?? 0)
        var baseStart = 0
        var start = 0
        var i = 0
        while start < items.count {
            let end = pageEnd(start: start, count: items.count)
            if let base, i < base.pages.count, baseStart == start, base.pages[i].count == end - start,
                end <= base.items.count, end <= unchanged || base.items[start..<end] == items[start..<end]
            {
                pages.append(base.pages[i])
                kept[i] = true
            } else {
                pages.append(Page(count: end - start, block: try block(items[start..<end], false)))
            }
            if let base, i < base.pages.count { baseStart += base.pages[i].count }
            start = end
            i += 1
        }
        let dropped = base?.pages.indices.filter { !kept[$0] }.map { base!.pages[$0].block } ?? []
        return (try table(pages), dropped)
    }

    /// The items of `pages` in page order, each page's from `load`: corrupted unless every page
    /// holds its count and `continues(last of the previous page, first of this one)` holds.
    static func join<T>(_ pages: [Page], what: String, load: (Page) throws -> [T], continues: (T, T) -> Bool) throws -> [T] {
        var items: [T] = []
        for p in pages {
            let part = try load(p)
            guard part.count == p.count, let first = part.first, items.last.map({ continues($0, first) }) ?? true else {
                throw StorageError.corrupted("\(what) page does not continue the \(what)", at: Int(p.block.offset))
            }
            items += part
        }
        return items
    }

    /// The page entries of a top block: `count` entries of 24 bytes from `r`'s position.
    static func decode(_ r: inout BlockReader, count: Int, what: String) throws -> [Page] {
        var pages: [Page] = []
        pages.reserveCapacity(count)
        for i in 0..<count {
            let n = try r.u64()
            guard n >= 1, n <= UInt64(maximumCount) else { throw r.corrupted("\(what) page \(i) holds \(n) entries") }
            pages.append(Page(count: Int(n), block: try r.ref()))
        }
        // Pages are distinct, disjoint blocks: what they decode to is bounded by the file's size
        // (a page named twice, or overlapping another, could multiply it).
        let sorted = pages.map(\.block).sorted { $0.offset < $1.offset }
        for (a, b) in zip(sorted, sorted.dropFirst()) where b.offset < a.offset &+ a.length || a.offset &+ a.length < a.offset {
            throw r.corrupted("\(what) pages @\(a.offset) and @\(b.offset) overlap")
        }
        return pages
    }

    static func encode(_ pages: [Page], into w: inout ByteWriter) {
        var words: [UInt64] = []
        words.reserveCapacity(pages.count * 3)
        for p in pages {
            words.append(UInt64(p.count))
            words.append(p.block.offset)
            words.append(p.block.length)
        }
        w.u64s(words)
    }
}
