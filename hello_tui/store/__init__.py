"""What the engine keeps on disk: sessions, transcripts, notes, todos, memory, atomic files."""
