// The snippets need only compile and link (readme_snippets_test's BUILD says why); running them
// would need a device and the values a README leaves to its reader.
int main() { return 0; }
