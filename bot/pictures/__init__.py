"""Pictures of a round with Pillow: its results as a PNG and, on card tables, the
dealer's cards turning over as a GIF. Outside the pure rules and engine: the shell builds
a picture's model (``model``) from a round in the group's language, and this package
draws it."""
