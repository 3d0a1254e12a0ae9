# Two commands matter: `make demo` and `make test`. Both build .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   ?= out/demo
# real translations for the demo's pages: the shared data's Bibles where it is checked out beside the repo, else
# (empty) the English, French, German and Spanish Bibles bundled in conf/parallel-text/bible; none: built-in word lists
DEMO_TEXT ?= $(wildcard ../shared/data/parallel-text/bible)
JAR    := udfs/parascout-udfs.jar
JAVA   := $(wildcard jvm/src/main/java/parascout/*.java)

.PHONY: install check-java jar walk s3a-jars test test-fast readme-check demo lint bench package clean

check-java:
	@v=$$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  echo "parascout needs Java 17 or newer for PySpark 4 (found: $${v:-none})."; \
	  echo "Install it, e.g. 'sudo apt-get install openjdk-17-jre-headless' (Debian/Ubuntu),"; \
	  echo "'brew install openjdk@17' (macOS), then set JAVA_HOME."; exit 1; fi

$(STAMP): constraints.txt requirements-dev.txt setup.py pyproject.toml
	@$(MAKE) --no-print-directory check-java
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# exact pins from constraints.txt; torch==2.13.0 there is the CPU build (an unpinned torch pulls CUDA)
	$(BIN)/pip install -q -c constraints.txt torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -r requirements-dev.txt -e '.[all]'
	touch $(STAMP)

install: $(STAMP) $(JAR) walk s3a-jars

# The Java UDFs (CDX line parsing, registered domains, STRAND handles: used where the jar is on Spark's
# classpath), compiled against PySpark's own jars into the package, so the wheel carries the jar; without a
# JDK, jobs fall back to Spark expressions, regexp_replace and a pandas UDF.
jar: $(JAR)

$(JAR): $(JAVA) | $(STAMP)
	@if ! command -v javac >/dev/null 2>&1; then \
	  echo "javac not found: $(JAR) not built; CDX lines, handles and domains fall back to Spark expressions and a pandas UDF (2-4x slower)."; \
	  echo "For the Java UDFs install a JDK 17+, e.g. 'sudo apt-get install openjdk-17-jdk-headless', then 'make jar'."; \
	else \
	  rm -rf build/jvm && mkdir -p build/jvm && \
	  javac --release 17 -Xlint:all,-path -Werror -d build/jvm \
	    -cp "$$(echo $(VENV)/lib/python*/site-packages/pyspark/jars)/*" $(JAVA) && \
	  jar --create --file $(JAR) -C build/jvm . && echo "built $(JAR)"; \
	fi

# The compiled HTML walk: udfs/fetch/page_walk.py (the walk and paragraph step, plain Python otherwise) compiled by
# Cython into udfs/ with its .pxd declarations, the pinned Cython and Lexbor's headers from selectolax's source package;
# never fails the install: without a C compiler, Python headers or the downloads, it says why and fetch-docs runs
# page_walk as plain Python (same output, slower). udfs.fetch.html_text uses it only for the selectolax it was built for.
walk: | $(STAMP)
	-$(BIN)/python native/build_html_walk.py

# hadoop-aws and the AWS SDK, for the tests whose jobs write their tables to an s3:// root on a local S3 server
# (Spark's own writes go through Hadoop's S3A; clusters bring their own: EMR's EMRFS, hadoop-aws on the classpath).
# PyPI's sagemaker_pyspark carries both jars; never fails the install: without them those tests skip and say why.
S3A_JARS := $(VENV)/s3a-jars
s3a-jars: $(S3A_JARS)/.fetched

$(S3A_JARS)/.fetched: | $(STAMP)
	-rm -rf build/s3a && mkdir -p build/s3a && \
	  $(BIN)/pip download -q --no-deps -d build/s3a sagemaker_pyspark==1.4.5 && \
	  tar -xzf build/s3a/sagemaker_pyspark-1.4.5.tar.gz -C build/s3a --strip-components=3 \
	    sagemaker_pyspark-1.4.5/deps/jars/hadoop-aws-3.3.1.jar \
	    sagemaker_pyspark-1.4.5/deps/jars/aws-java-sdk-bundle-1.11.901.jar && \
	  mkdir -p $(S3A_JARS) && mv build/s3a/*.jar $(S3A_JARS)/ && touch $@; rm -rf build/s3a

test: install
	$(BIN)/python -m pytest -q -ra tests

test-fast: install
	$(BIN)/python -m pytest -q -ra -m "not slow" tests

# README.md's commands and Python snippets run as written, in README order, in a fresh copy of the checkout
# on a 10-host sample archive (tests/support/readme_check.py says what it skips and why); exit 1 when one fails.
readme-check: install
	$(BIN)/python tests/support/readme_check.py

demo: install
	$(BIN)/parascout demo --out $(DEMO) $(if $(DEMO_TEXT),--text-corpus $(DEMO_TEXT))

lint: install
	$(BIN)/ruff check parascout jobs udfs tests testkit benchmarks native

bench: install
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

# What a cluster needs: the wheel, the pinned requirements, the Spark properties of
# each environment, and a packed virtual environment for spark.archives (venv-pack).
package: install
	rm -rf dist build && mkdir -p dist
	@if [ ! -f $(JAR) ]; then echo; echo "WARNING: $(JAR) is missing (no JDK?): the wheel has NO Java UDFs;"; \
	  echo "         clusters fall back to Spark expressions and pandas UDFs (2-4x slower). Install a JDK and 'make jar'."; echo; fi
	@for so in udfs/html_walk*.so; do [ -f "$$so" ] && echo "NOTE: the wheel carries $$so, the compiled HTML walk for THIS platform and Python only;" && \
	  echo "      workers on another platform, Python or selectolax version use the Python walk (same output, slower)."; done; true
	$(BIN)/pip wheel -q --no-deps --no-build-isolation -w dist .
	rm -rf build
	cp constraints.txt deploy/emr/bootstrap.sh deploy/dataproc/init.sh dist/
	if [ -f $(JAR) ]; then cp $(JAR) dist/; fi
	$(BIN)/parascout spark-properties conf/emr.yaml > dist/spark-emr.properties
	$(BIN)/parascout spark-properties conf/dataproc.yaml > dist/spark-dataproc.properties
	$(PYTHON) -m venv build/pack-venv
	build/pack-venv/bin/pip install -q -c constraints.txt torch==2.13.0
	build/pack-venv/bin/pip install -q -c constraints.txt "$$(ls dist/parascout-*.whl)[all]" venv-pack
	build/pack-venv/bin/venv-pack -p build/pack-venv -o dist/parascout-venv.tar.gz
	@ls -la dist

clean:
	rm -rf build dist *.egg-info out $(JAR) udfs/html_walk*.so
