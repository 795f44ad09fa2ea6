# Hello world for bench/profiler_overhead.rb and bench/profiler_instructions.rb: a bare Rack
# lambda, so what the profiler adds is measured against the least a request can cost. (No
# frozen-string-literal comment: the body string is built per request, as in the runs whose
# numbers are in bench/results/.)
run ->(_env) { [200, { "content-type" => "text/plain" }, ["Hello, world!\n"]] }
