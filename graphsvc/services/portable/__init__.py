"""Portable relations: a user's follows, blocks, mutes and lists exported in Mastodon's CSV
formats (or JSON) and imported back, merged or overwriting, in the background
(``domain/portable.py`` holds the formats)."""
