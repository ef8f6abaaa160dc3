// A request that leaves the machine (the test maps every host but 127.0.0.1 to nothing, so it also fails).
fetch('http://example.com/planted').catch(() => {});
