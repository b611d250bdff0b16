-- post.lua - wrk script: every request creates a category (POST with a JSON body).
wrk.method = "POST"
wrk.body = '{"name":"bench","description":"created by wrk"}'
wrk.headers["Content-Type"] = "application/json"
