"""One module per stage; thin: read inputs, call ops/ and resources, write outputs, attach metadata."""
