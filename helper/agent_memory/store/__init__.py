"""Object stores behind one small interface: a Hugging Face bucket (`hub`), or a local folder with the same layout
(`local`); `bucket` opens the one a bucket URI names."""
