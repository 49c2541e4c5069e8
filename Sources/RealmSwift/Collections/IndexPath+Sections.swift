import Foundation

#if !canImport(UIKit) && !canImport(AppKit)
    /// The section and row accessors UIKit and AppKit add to `IndexPath`, which Linux's Foundation
    /// lacks: ``SectionedResults`` and ``SectionedResultsChange`` use two-index paths
    /// `[section, item]`.
    extension IndexPath {
        /// The index path of row `item` in section `section`.
        public init(item: Int, section: Int) { self.init(indexes: [section, item]) }
        /// The index path of row `row` in section `section`.
        public init(row: Int, section: Int) { self.init(indexes: [section, row]) }

        /// The section (the first index).
        public var section: Int {
            get { self[0] }
            set { self[0] = newValue }
        }
        /// The item within the section (the second index).
        public var item: Int {
            get { self[1] }
            set { self[1] = newValue }
        }
        /// The row within the section (the second index; the same as ``item``).
        public var row: Int {
            get { self[1] }
            set { self[1] = newValue }
        }
    }
#endif
